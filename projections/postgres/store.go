package postgres

import (
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/infra/kafka"
)

// ErrNotFound is returned by queries when no row matches within the tenant.
var ErrNotFound = errors.New("not found")

// ErrInvalidCursor is returned by ListRuns for a cursor it did not issue.
var ErrInvalidCursor = errors.New("invalid cursor")

// RecordError reports a record that cannot be projected (not a valid event
// envelope, a payload the read model needs that does not decode, or a seq
// gap, wrapping an *events.SeqGapError). Nothing of the batch was written; the caller
// decides whether to dead-letter it.
type RecordError struct {
	Partition int32
	Offset    int64
	Err       error
}

func (e *RecordError) Error() string {
	return fmt.Sprintf("record partition %d offset %d: %v", e.Partition, e.Offset, e.Err)
}

func (e *RecordError) Unwrap() error { return e.Err }

// Record is one committed record of the events topic (a kafka.Record):
// Value is the event envelope JSON exactly as it was produced.
type Record = kafka.Record

// Store reads and writes the Postgres read models. It is safe for concurrent
// use. Call Close to stop its notification listener.
type Store struct {
	pool     *pgxpool.Pool
	log      *zap.Logger
	listener *listener
	recheck  time.Duration // WaitCommand's fallback poll; tests raise it
	topic    string        // events topic of the runner.Projector methods
}

// New returns a Store over pool, whose database must have Migrations applied.
// It panics on a nil dependency (a wiring bug).
func New(pool *pgxpool.Pool, logger *zap.Logger, opts ...Option) *Store {
	if pool == nil {
		panic("projections/postgres.New: pool is nil")
	}
	if logger == nil {
		panic("projections/postgres.New: logger is nil")
	}
	s := &Store{pool: pool, log: logger, listener: newListener(pool, logger), recheck: recheckInterval,
		topic: defaultTopic()}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Close stops the notification listener, if WaitCommand started it, and waits
// for it to end. WaitCommand calls after Close still work, by polling alone.
// It does not close the pool.
func (s *Store) Close() {
	s.listener.close()
}
