-- A revoke of a session's grant is ordered with the creates that hand the
-- session's grants to a new run. Each takes a lock on the session (an
-- advisory transaction lock on the hash of tenant and session): a create
-- shared, from the read of the grants until its CreateRun is in Kafka; a
-- revoke exclusive, while it marks the grant and lists the runs it sends to.
-- So a create either reads the mark, or is done sending before the revoke
-- lists its run. Both tables are written by the API, not derived from the
-- log, and a replay (Reset) leaves them alone, as it does session_owners.

-- The runs the API created in an existing session, claimed before their
-- CreateRun is sent: the read model may not have them yet when a revoke
-- lists the session's runs.
CREATE TABLE session_run_claims (
    tenant_id           text        NOT NULL,
    platform_session_id text        NOT NULL,
    run_id              text        NOT NULL,
    claimed_at          timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, platform_session_id, run_id)
);

-- The grants a revoke was asked for: from the mark on, no new run of the
-- session inherits the grant and the session no longer lists it, before the
-- revoked runs' events reach the read model.
CREATE TABLE session_grant_revocations (
    tenant_id           text        NOT NULL,
    platform_session_id text        NOT NULL,
    grant_id            text        NOT NULL,
    requested_at        timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, platform_session_id, grant_id)
);
