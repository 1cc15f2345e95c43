package postgres

import (
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"
)

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
