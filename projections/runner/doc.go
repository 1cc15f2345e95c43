// Package runner hosts a projector (a view of the events topic): a franz-go
// consumer group per view, read_committed, that hands the view whole polled
// batches (bounded in records and bytes, each event decoded once), commits
// the group's offsets only after the view applied them, retries with backoff
// and dead-letters poison records. While one poll is applied the next
// buffered records are decoded.
//
// Guarantees:
//   - At least once, exactly-once effect: views write idempotently by
//     (runId, seq); a view that stores its position with its writes
//     (Checkpoints) is resumed from there, else from the group's offsets.
//   - Order: a batch holds each partition's records in offset order, so each
//     run's events reach the view in seq order. No partition is revoked
//     between a poll and the commit of what it returned.
//   - Nothing is skipped silently: a failing batch is retried with backoff
//     for as long as it fails. A record the view declares poison
//     (PoisonError) goes to the dead-letter topic with its headers and its
//     reason, and every later record of that run follows it there, so the
//     view never holds a run with a gap; other runs keep flowing. The stopped
//     runs are rebuilt from the dead-letter topic when a runner starts.
//   - A batch that fails is applied again record by record, so one poison
//     record cannot hold back the records of other runs.
package runner
