package postgres_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/xbot-runtime/xbot/projections/postgres"
)

// TestOnlyTheTablesOwnerAnalyzesThem: a projector whose role does not own
// the view's tables leaves them to their owner, without a word from the
// server (Postgres skips such a table with a warning, which would come back
// at every check); the owner's projector analyzes them.
func TestOnlyTheTablesOwnerAnalyzesThem(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	if _, err := f.pool.Exec(ctx, `INSERT INTO runs (run_id, tenant_id, status, input, sandbox_key, last_seq,
	created_at, updated_at)
SELECT 'run_' || g, 'acme', 'completed', '{}', '{}', 9, now(), now() FROM generate_series(1, 5000) g`); err != nil {
		t.Fatal(err)
	}

	secret := make([]byte, 12)
	_, _ = rand.Read(secret)
	role, password := "reader_"+hex.EncodeToString(secret[:6]), hex.EncodeToString(secret[6:])
	if _, err := f.pool.Exec(ctx, "CREATE ROLE "+pgx.Identifier{role}.Sanitize()+" LOGIN PASSWORD '"+password+"'"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := f.pool.Exec(context.Background(), "DROP ROLE "+pgx.Identifier{role}.Sanitize()); err != nil {
			t.Errorf("drop role: %v", err)
		}
	})
	var mu sync.Mutex
	var notices []string
	reader := f.storeWith(t, func(cfg *pgxpool.Config) {
		cfg.ConnConfig.User, cfg.ConnConfig.Password = role, password
		cfg.ConnConfig.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
			mu.Lock()
			defer mu.Unlock()
			notices = append(notices, n.Severity+": "+n.Message)
		}
	})

	postgres.AnalyzeGrown(ctx, reader)
	mu.Lock()
	if len(notices) > 0 {
		t.Errorf("the server answered the check of a role that does not own the tables with %q", notices)
	}
	mu.Unlock()
	if analyzed(t, f, "runs") {
		t.Fatal("runs was analyzed before its owner's check")
	}
	postgres.AnalyzeGrown(ctx, f.store)
	if !analyzed(t, f, "runs") {
		t.Error("the owner's check did not analyze runs, which grew from nothing to 5,000 rows")
	}
}

// analyzed says whether table was ever analyzed by hand.
func analyzed(t *testing.T, f *fixture, table string) bool {
	t.Helper()
	var yes bool
	if err := f.pool.QueryRow(context.Background(),
		"SELECT last_analyze IS NOT NULL FROM pg_stat_user_tables WHERE relname = $1", table).Scan(&yes); err != nil {
		t.Fatal(err)
	}
	return yes
}
