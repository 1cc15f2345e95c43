// Package clickhouse is the ClickHouse projection of the event log: the audit
// tables audit_events (every event) and audit_commands (every command
// outcome), written by *Projector, the runner.Projector "clickhouse". The
// queries auditors run against them are in docs/auditing.md.
//
// Guarantees:
//
//   - Every event of the log becomes one row of audit_events, keyed by
//     (tenant_id, run_id, seq); every command outcome event also becomes one
//     row of audit_commands with the same key. Both tables are
//     ReplacingMergeTree: a row written twice (a re-delivered batch, a
//     rebuild over a live view) is folded into one by background merges, and
//     queries that count must read with FINAL (or aggregate with argMax) to
//     see each row once before that.
//   - Every column is derived from the event alone (times from occurredAt and
//     emittedAt), so a view rebuilt from offset zero has the same Checksums
//     as the live one. The exceptions, kafka_partition and kafka_offset,
//     locate the event in one copy of the topic and are left out of
//     Checksums.
//   - At least once, checkpoint last: Apply sends the batch as one insert
//     into audit_events; inside the server that insert goes on, through
//     materialized views and in this order, to audit_commands, to each
//     run's last seq and, last, to each partition's next offset
//     (Checkpoints). So the position is stored with the writes it covers.
//     ClickHouse has no transactions: an insert that fails partway keeps
//     what it wrote but not the checkpoint, the batch is applied again, and
//     the repeated rows are deduplicated.
//   - The first writer of a (run, seq) stands: an event whose (run, seq) is
//     stored (or earlier in its batch) with another event id, type or
//     payload is refused and logged, and so, given WithPartitions, is an
//     event that is not on its run's partition (only that partition's
//     executor may write the run). A re-delivery of the stored record is
//     written again and folded as before. Refused events are not
//     dead-lettered: that would stop the genuine run's view.
//   - The view never skips a seq: a record whose seq is more than one past
//     its run's last stored seq fails the batch with a *runner.PoisonError
//     before anything of the batch is written; so does a record whose
//     payload does not decode or whose time a DateTime cannot hold.
//     Unknown event types (a newer writer) are recorded with the envelope's
//     columns and their payload.
//
// Cost: an insert into audit_events takes ~30 ms on ClickHouse 18.16 here
// whatever its size (one part per table, one file pair per column), so the
// projector's throughput is about the batch size times 30 per second: feed
// it batches of hundreds or thousands of records.
//
// The schema keeps within ClickHouse 18.16: DateTime('UTC') plus
// a UInt64 column of milliseconds, String for JSON, no Map, TTL or CODEC.
// 18.16 has no ADD COLUMN IF NOT EXISTS either: Migrate skips a migration
// whose columns exist already, so applying the migrations again is harmless
// even after an ALTER that succeeded unrecorded.
package clickhouse
