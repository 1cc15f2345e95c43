package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/xbot-runtime/xbot/infra/devstack/pgtest"
	"github.com/xbot-runtime/xbot/infra/postgres"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// testTimeout bounds the database work of one test.
const testTimeout = time.Minute

// newPool connects to a fresh database of its own, closed when t ends.
func newPool(t *testing.T) *pgxpool.Pool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	pool, err := postgres.Connect(ctx, pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}
