// Package runner runs a projector (a view of the events topic) on a
// watermill Router over the wmkafka subscriber: a consumer group per view,
// read_committed, offsets committed only after the view applied the record,
// a recoverer, retry with backoff, and a poison queue.
//
// Guarantees:
//   - At least once, exactly-once effect: views write idempotently by
//     (runId, seq); a view that stores its position with its writes
//     (Checkpoints) is resumed from there, else from the group's offsets.
//   - Nothing is skipped silently: a failing batch is retried with backoff
//     for as long as it fails. A record the view declares poison
//     (PoisonError) goes to the dead-letter topic with its reason in headers,
//     and every later record of that run follows it there, so the view
//     never holds a run with a gap; other runs keep flowing. The stopped runs
//     are rebuilt from the dead-letter topic when a runner starts.
//   - Records handled at the same time (one in flight per partition) are
//     applied as one batch; a batch that fails is split per record.
package runner
