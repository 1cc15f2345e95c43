package postgrestest

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap/zaptest"

	"github.com/xbot-runtime/xbot/infra/devstack/pgtest"
	infrapg "github.com/xbot-runtime/xbot/infra/postgres"
	"github.com/xbot-runtime/xbot/projections/postgres"
)

// setupTimeout bounds connecting and migrating; generous so a loaded
// machine does not flake.
const setupTimeout = time.Minute

// New returns a Store (built with opts, logging to tb) over a fresh,
// migrated database of tb's own, and the pool under it for queries of the
// test's own. Both are closed when tb ends.
func New(tb testing.TB, opts ...postgres.Option) (*postgres.Store, *pgxpool.Pool) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	pool, err := infrapg.Connect(ctx, pgtest.NewDatabase(tb))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(pool.Close)
	if err := infrapg.Migrate(ctx, pool, postgres.Component, postgres.Migrations); err != nil {
		tb.Fatal(err)
	}
	store := postgres.New(pool, zaptest.NewLogger(tb), opts...)
	tb.Cleanup(store.Close)
	return store, pool
}

// Reconfigured returns a Store (logging to tb) on a pool of its own,
// configured as pool's with change made: another role, other session
// settings, a server that does not answer. Both are closed when tb ends.
func Reconfigured(tb testing.TB, pool *pgxpool.Pool, change func(*pgxpool.Config)) *postgres.Store {
	tb.Helper()
	cfg := pool.Config()
	change(cfg)
	own, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(own.Close)
	store := postgres.New(own, zaptest.NewLogger(tb))
	tb.Cleanup(store.Close)
	return store
}
