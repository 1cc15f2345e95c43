-- A platform_session grant may carry a TTL (expires_at, from the deciding
-- event's time) and may be revoked (the granting run's
-- runtime.permission_grant.revoked). A grant in force has revoked_at NULL and
-- expires_at NULL or in the future.
ALTER TABLE permission_grants
    ADD COLUMN expires_at      timestamptz,
    ADD COLUMN revoked_at      timestamptz,
    ADD COLUMN revoke_reason   text NOT NULL DEFAULT '',
    ADD COLUMN revoked_by_type text NOT NULL DEFAULT '',
    ADD COLUMN revoked_by_id   text NOT NULL DEFAULT '';

CREATE INDEX permission_grants_grant_id ON permission_grants (grant_id);

-- A request that asks again because the grant that covered such calls was
-- revoked or expired: runtime.item.awaiting_approval askReason and grantId.
ALTER TABLE approvals
    ADD COLUMN ask_reason      text NOT NULL DEFAULT '',
    ADD COLUMN lapsed_grant_id text NOT NULL DEFAULT '';
