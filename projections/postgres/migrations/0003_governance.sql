-- Governance (issue 4): usage totals, queue order and capability snapshot of
-- runs; the policy fields and the expiry of approvals; the identity of
-- permission grants; the run a command created. Like 0001 and 0002, every
-- value comes from events (or, for the queue order, from the position of
-- runtime.run.accepted in the events topic, which a rebuild reads again),
-- so a rebuild from offset zero equals the live view. A database projected
-- before this migration has the new columns at their defaults: reset the
-- projector to fill them.

-- Usage: model_calls counts completed assistant_message items, whose
-- item.completed Data.usage adds to the token sums; compactions counts
-- runtime.context.compacted events, whose usage (the summarising call) adds
-- to the token sums too. accepted_partition and accepted_offset are where
-- runtime.run.accepted is in the events topic: runs of one sandbox key share
-- a partition and start in offset order (-1: projected before 0003).
ALTER TABLE runs
    ADD COLUMN snapshot_hash      text   NOT NULL DEFAULT '',
    ADD COLUMN model_calls        bigint NOT NULL DEFAULT 0,
    ADD COLUMN prompt_tokens      bigint NOT NULL DEFAULT 0,
    ADD COLUMN completion_tokens  bigint NOT NULL DEFAULT 0,
    ADD COLUMN total_tokens       bigint NOT NULL DEFAULT 0,
    ADD COLUMN compactions        bigint NOT NULL DEFAULT 0,
    ADD COLUMN accepted_partition int    NOT NULL DEFAULT -1,
    ADD COLUMN accepted_offset    bigint NOT NULL DEFAULT -1;

-- The queue position of a queued run counts the active runs of its sandbox
-- key; only they are indexed.
CREATE INDEX runs_tenant_sandbox_active ON runs (tenant_id, sandbox_key)
    WHERE status IN ('queued', 'running', 'paused');

-- approval_id, rule_id and request_reason come from
-- runtime.item.awaiting_approval (reason keeps the decision's reason);
-- grant_id from the decision of an item resolved by a grant. status is also
-- expired (the item failed with errorCode expired, or the run expired) or
-- cancelled (the item or its run ended otherwise before a decision).
ALTER TABLE approvals
    ADD COLUMN approval_id    text NOT NULL DEFAULT '',
    ADD COLUMN rule_id        text NOT NULL DEFAULT '',
    ADD COLUMN request_reason text NOT NULL DEFAULT '',
    ADD COLUMN grant_id       text NOT NULL DEFAULT '';

ALTER TABLE permission_grants
    ADD COLUMN grant_id   text NOT NULL DEFAULT '',
    ADD COLUMN rule_id    text NOT NULL DEFAULT '',
    ADD COLUMN actor_type text NOT NULL DEFAULT '',
    ADD COLUMN actor_id   text NOT NULL DEFAULT '';

-- created_run_id: runtime.command.applied payload createdRunId (the run a
-- follow-up created).
ALTER TABLE commands
    ADD COLUMN created_run_id text NOT NULL DEFAULT '';
