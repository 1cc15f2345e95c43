package runner

import (
	"context"
	"errors"
	"fmt"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/kafka"
)

// Projector is one view built from the events topic. The runner
// feeds it batches of committed events in log order per partition (so in seq
// order per run), at least once; views write idempotently by (runId, seq),
// so each event takes effect exactly once.
type Projector interface {
	// Name names the view ("postgres", "clickhouse", "im"); its consumer
	// group is "xbot-projector-<Name>".
	Name() string
	// Apply writes a batch. It is all or nothing where the store allows it,
	// and must be idempotent: a batch may be delivered again after a crash.
	// It returns a *PoisonError for a record that can never be applied (the
	// runner dead-letters it and stops that run's projection); any other
	// error is retried with backoff.
	Apply(ctx context.Context, batch []Record) error
	// Checkpoints returns the next offset per partition of the events topic
	// that the view stored with its writes, or nil when the view keeps no
	// position of its own (then the consumer group's committed offsets are
	// used).
	Checkpoints(ctx context.Context) (map[int32]int64, error)
	// Reset empties the view and its checkpoints, for a rebuild from the
	// beginning of the log.
	Reset(ctx context.Context) error
}

// Record is one committed event as read from the events topic.
type Record struct {
	kafka.Record
	// Event is the decoded envelope.
	Event events.Envelope
}

// PoisonError says a record can never be applied (a malformed payload, a
// seq gap in the view). The runner sends it to the dead-letter topic with
// Reason and applies nothing more of that run, so the view never skips a seq.
type PoisonError struct {
	Partition int32
	Offset    int64
	RunID     string
	Seq       int64
	Reason    string
}

func (e *PoisonError) Error() string {
	return fmt.Sprintf("poison record %d/%d (run %s seq %d): %s", e.Partition, e.Offset, e.RunID, e.Seq, e.Reason)
}

// Poison returns a *PoisonError for rec.
func Poison(rec Record, reason string) *PoisonError {
	return &PoisonError{Partition: rec.Partition, Offset: rec.Offset, RunID: rec.Event.RunID, Seq: rec.Event.Seq, Reason: reason}
}

// IsPoison reports whether err marks a record that can never be applied.
func IsPoison(err error) (*PoisonError, bool) {
	var pe *PoisonError
	ok := errors.As(err, &pe)
	return pe, ok
}
