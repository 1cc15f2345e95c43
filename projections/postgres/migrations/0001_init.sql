-- Read models of the Postgres projector (DESIGN §5). Every row is derived
-- from the event log; dropping these tables and replaying xbot.events.v1 from
-- offset zero rebuilds them identically. Times derived from events
-- (created_at, updated_at of runs and commands) come from the events'
-- occurredAt, never from the clock, so a rebuild equals the live view.
-- Text columns are NOT NULL DEFAULT '' so that "absent" has one spelling.

CREATE TABLE runs (
    run_id              text        PRIMARY KEY,
    tenant_id           text        NOT NULL,
    platform_session_id text        NOT NULL DEFAULT '',
    agent_id            text        NOT NULL DEFAULT '',
    parent_run_id       text        NOT NULL DEFAULT '',
    status              text        NOT NULL,
    pause_reason        text        NOT NULL DEFAULT '',
    error_code          text        NOT NULL DEFAULT '',
    cancel_reason       text        NOT NULL DEFAULT '',
    input               jsonb       NOT NULL,
    sandbox_key         jsonb       NOT NULL,
    metadata            jsonb,
    last_seq            bigint      NOT NULL,
    created_at          timestamptz NOT NULL,
    updated_at          timestamptz NOT NULL
);

CREATE INDEX runs_tenant_session_created ON runs (tenant_id, platform_session_id, created_at);
CREATE INDEX runs_tenant_status_created ON runs (tenant_id, status, created_at);
-- ListRuns without a session or status filter.
CREATE INDEX runs_tenant_created ON runs (tenant_id, created_at);

-- envelope is json, not jsonb: json keeps the envelope byte for byte as it
-- was on the log (jsonb reorders keys and rewrites whitespace) and accepts
-- the escape \u0000, which jsonb rejects; one such event would otherwise
-- stop the projector for good, since it may never skip a seq.
CREATE TABLE run_events (
    run_id              text   NOT NULL,
    seq                 bigint NOT NULL,
    event_id            text   NOT NULL,
    type                text   NOT NULL,
    tenant_id           text   NOT NULL,
    platform_session_id text   NOT NULL DEFAULT '',
    item_id             text   NOT NULL DEFAULT '',
    command_id          text   NOT NULL DEFAULT '',
    occurred_at         bigint NOT NULL,
    emitted_at          bigint NOT NULL,
    envelope            json   NOT NULL,
    PRIMARY KEY (run_id, seq)
);

-- Last applied seq of every run seen, including runs whose log holds only
-- refused commands and therefore has no runs row.
CREATE TABLE run_seq (
    run_id   text   PRIMARY KEY,
    last_seq bigint NOT NULL
);

CREATE TABLE commands (
    command_id          text        PRIMARY KEY,
    run_id              text        NOT NULL,
    tenant_id           text        NOT NULL,
    type                text        NOT NULL DEFAULT '',
    idempotency_key     text        NOT NULL DEFAULT '',
    outcome             text        NOT NULL,
    first_outcome       text        NOT NULL,
    code                text        NOT NULL DEFAULT '',
    message             text        NOT NULL DEFAULT '',
    original_command_id text        NOT NULL DEFAULT '',
    original_outcome    text        NOT NULL DEFAULT '',
    original_code       text        NOT NULL DEFAULT '',
    seq                 bigint      NOT NULL,
    updated_at          timestamptz NOT NULL
);

CREATE INDEX commands_tenant_run ON commands (tenant_id, run_id);

CREATE TABLE projector_checkpoints (
    projector   text        NOT NULL,
    topic       text        NOT NULL,
    partition   int         NOT NULL,
    next_offset bigint      NOT NULL,
    updated_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (projector, topic, partition)
);

CREATE TABLE projector_heartbeats (
    projector text        NOT NULL,
    instance  text        NOT NULL,
    beat_at   timestamptz NOT NULL,
    PRIMARY KEY (projector, instance)
);
