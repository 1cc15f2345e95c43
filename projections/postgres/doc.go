// Package postgres is the Postgres projection of the event log: the runs,
// run_events, commands, items, approvals, sessions and permission_grants
// read models that the query API serves, together with the projector's
// checkpoints and heartbeats.
//
// A *Store has two sides. Its *Projector is the runner.Projector "postgres":
// Apply and ApplyBatch, checkpoints, Reset, Checksums, heartbeats. Its
// *Queries is what the API reads: runs, events, commands, items, approvals,
// sessions, grants and the UI stream's backfill. Each read model has its
// files: <model>.go plans what a batch changes, <model>_write.go holds its
// SQL writes, <model>_query.go its exported row types and queries (runs,
// items, approvals, commands, grants, sessions, runevents for run_events).
// apply.go, plan.go and write.go run a batch through them.
//
// Guarantees:
//
//   - ApplyBatch is all or nothing per partition. The events of a
//     partition in the batch, the read-model changes they imply and the
//     partition's checkpoint (its next offset) commit in one transaction, so
//     a crash at any point leaves the view and the checkpoint consistent:
//     resuming from the checkpoint neither loses nor repeats an effect. A
//     batch of fewer than 1,024 records, or of one partition, commits in
//     one transaction; a larger one in up to two at once, each of whole
//     partitions (apply.go, writeGroups), as two instances of the projector
//     would.
//   - Writes are idempotent by (runId, seq). An event already applied is
//     skipped, so replaying records (a redelivered batch, a rebuild over an
//     existing view) changes nothing; checkpoints never move backwards.
//   - A projector never skips a seq. An event whose seq is not the run's last
//     applied seq + 1 fails the batch with a *RecordError wrapping a
//     *events.SeqGapError, and nothing of its transaction is written. A record that is not a
//     valid envelope, or whose payload a read model needs and cannot decode,
//     fails it with a *RecordError too; Apply reports such a record as a
//     *runner.PoisonError, which the runner dead-letters instead of
//     retrying.
//   - The sessions row of a platform session summarises its runs, which
//     live on any partition. It is refreshed under a per-session lock with
//     order-independent merges, so it does not depend on the order in which
//     partitions are applied.
//   - Every value in a read model is derived from events only (times come from
//     occurredAt), so a view rebuilt from offset zero equals the live one.
//   - run_events keeps each envelope byte for byte as it was on the log.
//   - A run's queue position is not stored: GetRun and ListRuns compute it
//     when they read, from the runs of its sandbox key and the offsets of
//     their runtime.run.accepted events, so it is current as of the view.
//   - An approval leaves pending exactly once (resolved, expired or
//     cancelled), so ListApprovals with Status ApprovalPending lists
//     exactly the items awaiting approval as of the view.
//   - Every query is scoped to a tenant and never returns another tenant's
//     rows; a row of another tenant is reported as ErrNotFound.
//   - WaitCommand returns once the command's outcome is committed. It is woken
//     by a Postgres notification sent on commit (one LISTEN connection per
//     Store) and re-checks every 200 ms, so a lost notification or a broken
//     listener connection only delays it.
//
// Concurrent ApplyBatch calls for the same projector, topic and partition
// (two instances during a rebalance) are serialised by a transaction-scoped
// advisory lock; the second sees the first's events as already applied.
package postgres
