-- A session's state (GET /v1/sessions/{id}/state) shows its head run, its
-- open reply, its open and its latest closed interactions and its queued and
-- latest admitted inputs, a few of each. It read the lists by joining every
-- run of the session with its approvals, questions and commands, so its cost
-- grew with the session's history (30-38 ms at 2,000 runs). Items and
-- commands now carry their run's platform session, as approvals do, and each
-- list has a partial index in the order it is read: a read is a few index
-- probes whatever the session's length (1.5-1.7 ms at 2,000 runs,
-- BenchmarkSessionState).
--
-- The new columns are filled from the event that wrote each row (an item's
-- start, a command's latest outcome), as the projector writes them, so a
-- migrated view equals one rebuilt from the log. Both tables are rewritten
-- once.
ALTER TABLE items ADD COLUMN platform_session_id text NOT NULL DEFAULT '';
ALTER TABLE commands ADD COLUMN platform_session_id text NOT NULL DEFAULT '';

UPDATE items AS i SET platform_session_id = e.platform_session_id
FROM run_events AS e
WHERE e.run_id = i.run_id AND e.seq = i.started_seq AND e.platform_session_id <> '';

UPDATE commands AS c SET platform_session_id = e.platform_session_id
FROM run_events AS e
WHERE e.run_id = c.run_id AND e.seq = c.seq AND e.platform_session_id <> '';

CREATE INDEX approvals_session_open ON approvals
    (tenant_id, platform_session_id, requested_at, run_id, item_id)
    WHERE status = 'pending';
CREATE INDEX approvals_session_closed ON approvals
    (tenant_id, platform_session_id, resolved_at DESC NULLS LAST, run_id DESC, item_id DESC)
    WHERE status <> 'pending';

CREATE INDEX items_session_questions_open ON items
    (tenant_id, platform_session_id, started_at, run_id, item_id)
    WHERE type = 'clarification_request' AND status IN ('started', 'awaiting_approval');
CREATE INDEX items_session_questions_closed ON items
    (tenant_id, platform_session_id, completed_at DESC NULLS LAST, run_id DESC, item_id DESC)
    WHERE type = 'clarification_request' AND status NOT IN ('started', 'awaiting_approval');

CREATE INDEX commands_session_queued ON commands
    (tenant_id, platform_session_id, updated_at, command_id)
    WHERE type = 'AppendUserInput' AND outcome = 'accepted';
CREATE INDEX commands_session_admitted ON commands
    (tenant_id, platform_session_id, updated_at DESC, command_id DESC)
    WHERE (type = 'AppendUserInput' AND outcome = 'applied')
       OR (type = 'CreateRun' AND outcome = 'accepted' AND idempotency_key NOT LIKE 'follow\_up:%');

-- The session's head (its first run whose reply has not ended) and its
-- open reply are read among its live runs only (the statuses that are not
-- terminal, as runs_stream.go's liveStatusesSQL lists them).
CREATE INDEX runs_session_live ON runs (tenant_id, platform_session_id, created_at, run_id)
    WHERE status IN ('created', 'queued', 'running', 'paused');
