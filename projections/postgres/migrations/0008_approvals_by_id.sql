-- An approval by its id within a tenant (GET /v1/approvals?approvalId=):
-- how a chat button's short payload finds its run and item. Without it the
-- lookup read every approval of the tenant.
CREATE INDEX approvals_tenant_approval_id ON approvals (tenant_id, approval_id) WHERE approval_id <> '';
