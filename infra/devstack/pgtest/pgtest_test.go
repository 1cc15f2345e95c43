package pgtest_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/xbot-runtime/xbot/infra/devstack/internal/sharedsrv"
	"github.com/xbot-runtime/xbot/infra/devstack/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestNewDatabaseIsolatedAndDropped(t *testing.T) {
	t.Parallel()
	sharedsrv.CheckDatabases(t, func(t *testing.T) string {
		return currentDatabase(t, pgtest.NewDatabase(t))
	}, func(t *testing.T, name string) bool {
		var n int
		err := connect(t, pgtest.Shared(t).DSN("postgres")).QueryRow(context.Background(),
			"SELECT count(*) FROM pg_database WHERE datname = $1", name).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		return n != 0
	})
}

func currentDatabase(t *testing.T, dsn string) string {
	t.Helper()
	var name string
	if err := connect(t, dsn).QueryRow(context.Background(), "SELECT current_database()").Scan(&name); err != nil {
		t.Fatal(err)
	}
	return name
}

// connect opens a connection closed when t ends.
func connect(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}
