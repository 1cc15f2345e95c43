// Package runner runs a projector: a consumer group on the events topic that
// applies batches to a view together with the view's checkpoint, heartbeats,
// and retries a failing batch instead of skipping it.
//
// Guarantees: positions come from the view's own checkpoints, so a batch is
// applied at least once and — because views write idempotently by
// (runId, seq) — takes effect exactly once. Nothing is skipped: a batch that
// cannot be applied is retried with backoff and blocks the projector (the
// dead-letter policy of a later issue replaces blocking for poison records).
package runner
