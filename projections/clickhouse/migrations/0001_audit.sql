-- The audit view (DESIGN §5), within what ClickHouse 18.16 supports: DateTime
-- (seconds, UTC; milliseconds in a separate UInt64), no JSON, Map, TTL or CODEC.
-- Every statement is idempotent: ClickHouse has no transactional DDL, and a
-- file that failed halfway is run again from its start.

-- Every event of the log, one row per (tenant_id, run_id, seq). Columns other
-- than the envelope's are extracted from the payload where the event type has
-- them and empty ('' / 0 / NULL) otherwise; payload keeps the whole payload.
CREATE TABLE IF NOT EXISTS audit_events (
    tenant_id           String,
    run_id              String,
    seq                 UInt64,
    event_id            String,
    type                String,
    platform_session_id String,
    occurred_at         DateTime('UTC'),
    occurred_ms         UInt64,
    emitted_at          DateTime('UTC'),
    emitted_ms          UInt64,
    actor_type          String,
    actor_id            String,
    command_id          String,
    command_type        String,
    idempotency_key     String,
    item_id             String,
    item_type           String,
    tool_name           String,
    arguments           String,
    status              String,
    decision            String,
    scope               String,
    reason              String,
    error_code          String,
    message             String,
    exit_code           Nullable(Int32),
    pause_reason        String,
    agent_id            String,
    model               String,
    total_tokens        UInt32,
    payload             String,
    kafka_partition     Int32,
    kafka_offset        Int64
) ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(occurred_at)
ORDER BY (tenant_id, run_id, seq);

-- Every command outcome: runtime.run.accepted (a CreateRun accepted) and
-- runtime.command.{accepted,rejected,applied,no_effect,duplicate}, one row
-- per outcome event, deduplicated like audit_events. A command that was
-- accepted and later applied has two rows; its latest outcome is the one
-- with the highest seq. The rows are written by the server from each insert
-- into audit_events (audit_mv1_commands), so they are stored with the events.
CREATE TABLE IF NOT EXISTS audit_commands (
    tenant_id           String,
    run_id              String,
    seq                 UInt64,
    event_id            String,
    command_id          String,
    command_type        String,
    idempotency_key     String,
    outcome             String,
    code                String,
    message             String,
    original_command_id String,
    original_outcome    String,
    created_run_id      String,
    actor_type          String,
    actor_id            String,
    command             String,
    occurred_at         DateTime('UTC'),
    occurred_ms         UInt64
) ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(occurred_at)
ORDER BY (tenant_id, run_id, seq);

-- The payload fields read here are flat fields of the outcome payloads
-- (events.Command*Payload); visitParamExtract* is 18.16's JSON accessor.
CREATE MATERIALIZED VIEW IF NOT EXISTS audit_mv1_commands TO audit_commands AS
SELECT
    tenant_id,
    run_id,
    seq,
    event_id,
    command_id,
    command_type,
    idempotency_key,
    if(type = 'runtime.run.accepted', 'accepted', replaceOne(type, 'runtime.command.', '')) AS outcome,
    if(type = 'runtime.command.duplicate', visitParamExtractString(payload, 'originalCode'), error_code) AS code,
    if(type = 'runtime.command.no_effect', reason, message) AS message,
    if(type = 'runtime.command.duplicate', visitParamExtractString(payload, 'originalCommandId'), '') AS original_command_id,
    if(type = 'runtime.command.duplicate', visitParamExtractString(payload, 'originalOutcome'), '') AS original_outcome,
    if(type = 'runtime.command.applied', visitParamExtractString(payload, 'createdRunId'), '') AS created_run_id,
    actor_type,
    actor_id,
    multiIf(type = 'runtime.run.accepted', payload,
            type = 'runtime.command.accepted', visitParamExtractRaw(payload, 'command'), '') AS command,
    occurred_at,
    occurred_ms
FROM audit_events
WHERE type IN ('runtime.run.accepted', 'runtime.command.accepted', 'runtime.command.rejected',
               'runtime.command.applied', 'runtime.command.no_effect', 'runtime.command.duplicate');

-- The projector's bookkeeping, filled by the server from each insert into
-- audit_events, so it is stored with the events it describes: the last seq
-- of every run (for the gap check) and the next Kafka offset per partition
-- (the projector's checkpoint). Read both with max(); ReplacingMergeTree
-- keeps the highest value per key.
--
-- An insert is written to audit_events first, then to its materialized views
-- in the order of their names, and stops at the first that fails. The
-- checkpoint view's name sorts last, so a checkpoint is stored only after
-- every row it covers (TestCheckpointWrittenLast checks this order).
CREATE TABLE IF NOT EXISTS audit_run_seqs (
    run_id   String,
    last_seq UInt64
) ENGINE = ReplacingMergeTree(last_seq)
ORDER BY run_id;

CREATE MATERIALIZED VIEW IF NOT EXISTS audit_mv2_run_seqs TO audit_run_seqs AS
SELECT run_id, max(seq) AS last_seq FROM audit_events GROUP BY run_id;

CREATE TABLE IF NOT EXISTS audit_checkpoints (
    kafka_partition Int32,
    next_offset     Int64
) ENGINE = ReplacingMergeTree(next_offset)
ORDER BY kafka_partition;

CREATE MATERIALIZED VIEW IF NOT EXISTS audit_mv3_checkpoints TO audit_checkpoints AS
SELECT kafka_partition, max(kafka_offset) + 1 AS next_offset FROM audit_events GROUP BY kafka_partition;
