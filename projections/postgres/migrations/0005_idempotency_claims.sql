-- Which request an idempotency key of CreateRun stands for, tenant-wide. A
-- create's run id depends on its sandbox key, so the executor that sees a
-- reused key with another sandbox key is another partition's owner and
-- cannot tell; the API claims (tenant, key) here first, the primary key
-- deciding between concurrent creates, and refuses a claim whose request
-- fingerprint differs. Like session_owners it is written by the API, not
-- derived from the log, and a replay (Reset) leaves it alone.
CREATE TABLE idempotency_claims (
    tenant_id       text        NOT NULL,
    idempotency_key text        NOT NULL,
    fingerprint     text        NOT NULL,
    run_id          text        NOT NULL,
    claimed_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, idempotency_key)
);
