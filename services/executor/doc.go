// Package executor is the run controller: it owns partitions of the commands
// topic, rebuilds the runs of each owned partition by folding its committed
// events, admits commands (validation, idempotency, state), and drives runs
// through an Engine, appending every fact to the events topic.
//
// Guarantees:
//   - Every event is folded against its run's state before it is appended, so
//     the log of every run folds cleanly (the log invariant, docs/architecture.md).
//   - A run's seq advances in memory only after its transaction committed; an
//     append whose outcome is unknown ends the partition's session and the
//     next owner rebuilds from what committed.
//   - A command's effects and its consumed offset commit in one transaction,
//     so after any crash each command takes effect exactly once.
//   - Only commands signed by a key of Config.CommandKeys, decoding to a
//     valid envelope, keyed by their runId and on the partition
//     partition.For(runId) names are admitted. Any other record goes
//     unchanged to the dead-letter topic, in the transaction of its batch,
//     with its reason (unauthenticated, undecodable, invalid, misrouted) in
//     headers, and appends nothing to any run. A dead letter is written at
//     least once: if the partition changes owner before a later command of
//     it is admitted, the next owner writes it again (the
//     xbot-source-partition and xbot-source-offset headers identify it).
//   - External commands that change a running run take effect only at safe
//     points (SafePoint); a run never reaches a terminal state while a
//     command is pending.
//
// Each owned partition has one partitionWorker (worker.go), the single
// goroutine that folds and appends its runs' events, one transaction per
// batch (batch.go). A command record is screened (deadletter.go), then
// decided by its command type (commands.Admit) and the decision applied
// (admission.go). rebuild.go takes a partition over; drive.go and start.go
// hand its runs to the Engine; run.go is the Engine's handle on a run;
// sched.go queues runs per sandbox key and expires paused runs; yield.go
// lets a paused run yield its key and queues it again when it is resumed
// while the key is taken; endings.go
// ends runs no command ended (failed, expired).
package executor
