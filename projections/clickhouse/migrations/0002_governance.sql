-- Governance (approvals, policy, grants): the ids auditors join and filter
-- on get columns of their own, as decision and scope did. They are '' where
-- the event type does not have them; payload keeps the rest (a compaction's
-- tokenStats, a snapshot's hash, an expiry's pausedAt and pauseTtlMs).
--
--   rule_id      the policy rule that asked for approval:
--                item.awaiting_approval, permission_grant.applied
--   approval_id  the approval request (apr_…): item.awaiting_approval and
--                the approval.decision_submitted that decides it
--   grant_id     the permission grant (grt_…): permission_grant.applied, and
--                each approval.decision_submitted the grant resolved
--
-- ClickHouse 18.16 has no ADD COLUMN IF NOT EXISTS: this one statement adds
-- the three columns together or not at all, and Migrate (migrations.go)
-- skips it when they exist already, which keeps the file idempotent.
ALTER TABLE audit_events
    ADD COLUMN rule_id String AFTER scope,
    ADD COLUMN approval_id String AFTER rule_id,
    ADD COLUMN grant_id String AFTER approval_id;
