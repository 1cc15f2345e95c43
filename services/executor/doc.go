// Package executor is the run controller: it owns partitions of the commands
// topic, rebuilds the runs of each owned partition by folding its committed
// events, admits commands (validation, idempotency, state), and drives runs
// through an Engine, appending every fact to the events topic.
//
// Guarantees:
//   - Every event is folded against its run's state before it is appended, so
//     the log of every run folds cleanly (the log invariant of DESIGN §2.2).
//   - A run's seq advances in memory only after its transaction committed; an
//     append whose outcome is unknown ends the partition's session and the
//     next owner rebuilds from what committed.
//   - A command's effects and its consumed offset commit in one transaction,
//     so after any crash each command takes effect exactly once.
//   - External commands that change a running run take effect only at safe
//     points (SafePoint); a run never reaches a terminal state while a
//     command is pending.
package executor
