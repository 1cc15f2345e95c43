-- Items, approvals, sessions and permission grants (DESIGN §5). Like 0001,
-- every value comes from events (times from occurredAt), so a rebuild from
-- offset zero equals the live view. A database projected before this
-- migration has these tables empty: reset the projector to fill them.

-- One row per RuntimeItem, written from runtime.item.* and
-- runtime.approval.decision_submitted (which returns an item awaiting
-- approval to started, as events.Fold does). Deltas do not touch it: output
-- is the text of the closing event. input and output are cut to 32 KiB
-- (the *_truncated flags say so); the full texts stay in run_events at
-- started_seq and updated_seq.
CREATE TABLE items (
    run_id           text        NOT NULL,
    item_id          text        NOT NULL,
    tenant_id        text        NOT NULL,
    type             text        NOT NULL,
    status           text        NOT NULL,
    started_seq      bigint      NOT NULL,
    updated_seq      bigint      NOT NULL,
    tool_name        text        NOT NULL DEFAULT '',
    tool_call_id     text        NOT NULL DEFAULT '',
    input            text        NOT NULL DEFAULT '',
    input_truncated  boolean     NOT NULL DEFAULT false,
    output           text,
    output_truncated boolean     NOT NULL DEFAULT false,
    error_code       text        NOT NULL DEFAULT '',
    error_message    text        NOT NULL DEFAULT '',
    exit_code        int,
    started_at       timestamptz NOT NULL,
    completed_at     timestamptz,
    duration_ms      bigint,
    PRIMARY KEY (run_id, item_id)
);

CREATE UNIQUE INDEX items_run_started ON items (run_id, started_seq);

-- One row per item that awaited approval; a later awaiting_approval of the
-- same item makes it pending again. input is json (not jsonb) for the same
-- reason as run_events.envelope: it keeps the text and accepts \u0000.
CREATE TABLE approvals (
    run_id              text        NOT NULL,
    item_id             text        NOT NULL,
    tenant_id           text        NOT NULL,
    platform_session_id text        NOT NULL DEFAULT '',
    item_type           text        NOT NULL DEFAULT '',
    status              text        NOT NULL,
    tool_name           text        NOT NULL DEFAULT '',
    input               json,
    decision            text        NOT NULL DEFAULT '',
    scope               text        NOT NULL DEFAULT '',
    actor_type          text        NOT NULL DEFAULT '',
    actor_id            text        NOT NULL DEFAULT '',
    reason              text        NOT NULL DEFAULT '',
    command_id          text        NOT NULL DEFAULT '',
    requested_seq       bigint      NOT NULL,
    resolved_seq        bigint,
    requested_at        timestamptz NOT NULL,
    resolved_at         timestamptz,
    PRIMARY KEY (run_id, item_id)
);

CREATE INDEX approvals_tenant_status_requested ON approvals (tenant_id, status, requested_at);
CREATE INDEX approvals_tenant_requested ON approvals (tenant_id, requested_at);

-- One row per (tenant, platform session) with at least one run, refreshed
-- whenever one of its runs changes: first and last run (by created_at, then
-- run id) read from runs, the number of runs, and the latest occurredAt of
-- any of their events. It does not depend on the order in which partitions
-- apply.
-- The sessions refresh reads a session's first and last run by
-- (created_at, run_id) with one index probe each, however many runs share a
-- created_at; the index also serves ListRuns by session, like the one it
-- replaces.
CREATE INDEX runs_tenant_session_created_run ON runs (tenant_id, platform_session_id, created_at, run_id COLLATE "C");
DROP INDEX runs_tenant_session_created;

CREATE TABLE sessions (
    tenant_id           text        NOT NULL,
    platform_session_id text        NOT NULL,
    first_run_id        text        NOT NULL,
    last_run_id         text        NOT NULL,
    last_run_status     text        NOT NULL,
    run_count           bigint      NOT NULL,
    first_run_at        timestamptz NOT NULL,
    last_activity_at    timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, platform_session_id)
);

-- One row per runtime.permission_grant.applied event.
CREATE TABLE permission_grants (
    run_id              text        NOT NULL,
    seq                 bigint      NOT NULL,
    tenant_id           text        NOT NULL,
    platform_session_id text        NOT NULL DEFAULT '',
    item_id             text        NOT NULL DEFAULT '',
    command_id          text        NOT NULL DEFAULT '',
    scope               text        NOT NULL,
    tool_name           text        NOT NULL,
    granted_at          timestamptz NOT NULL,
    PRIMARY KEY (run_id, seq)
);

CREATE INDEX permission_grants_tenant_session ON permission_grants (tenant_id, platform_session_id);
