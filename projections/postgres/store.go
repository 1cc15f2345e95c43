package postgres

import (
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"
)

// Store is the Postgres view in its two roles: the Projector the runner
// feeds (Apply, checkpoints, Reset, Checksums) and the Queries the API reads
// through. Both work on one pool. It is safe for concurrent use. Call Close
// to stop its notification listener.
type Store struct {
	*Projector
	*Queries
}

// Projector writes the read models from the events topic: it is the
// runner.Projector "postgres". It holds no query method; see Queries.
type Projector struct {
	pool  *pgxpool.Pool
	log   *zap.Logger
	topic string // events topic of the runner.Projector methods

	writers int // transactions that write a batch at once (writeGroups)
	splitAt int // records from which a batch is split among them

	mu        sync.Mutex // serialises the analyzer's count and analyzing
	analyze   analyzer
	analyzing sync.WaitGroup // the check in flight, if any (at most one)
	busy      bool           // a check is in flight
	closed    bool           // Close was called: no check starts
}

// Queries reads the read models, each query scoped to a tenant; the only
// row it writes is a platform session's owner (ClaimSession).
type Queries struct {
	pool     *pgxpool.Pool
	listener *listener
	recheck  time.Duration // WaitCommand's fallback poll; tests raise it
	holdIdle time.Duration // a session hold's bound (holdIdleTimeout); tests lower it
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
	s := &Store{
		Projector: &Projector{pool: pool, log: logger, topic: defaultTopic(), writers: writersFor(pool),
			splitAt: defaultSplitAt},
		Queries: &Queries{pool: pool, listener: newListener(pool, logger), recheck: recheckInterval,
			holdIdle: holdIdleTimeout},
	}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Close stops the notification listener, if WaitCommand started it, and waits
// for it to end, and for the projector's check of its tables in flight, if
// any. WaitCommand calls after Close still work, by polling alone. It does
// not close the pool.
func (s *Store) Close() {
	s.listener.close()
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.analyzing.Wait()
}
