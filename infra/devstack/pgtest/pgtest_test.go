package pgtest_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/xbot-runtime/xbot/infra/devstack/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestSharedIsOneServer(t *testing.T) {
	t.Parallel()
	first, second := pgtest.Shared(t), pgtest.Shared(t)
	if first != second {
		t.Fatal("Shared returned two servers")
	}
}

func TestNewDatabaseIsolatedAndDropped(t *testing.T) {
	t.Parallel()
	var names []string
	for range 2 {
		t.Run("sub/with odd-name", func(t *testing.T) {
			names = append(names, currentDatabase(t, pgtest.NewDatabase(t)))
		})
	}
	if names[0] == names[1] {
		t.Fatalf("two tests got database %s", names[0])
	}
	admin := pgtest.Shared(t).DSN("postgres")
	for _, name := range names {
		conn := connect(t, admin)
		var n int
		err := conn.QueryRow(context.Background(), "SELECT count(*) FROM pg_database WHERE datname = $1", name).Scan(&n)
		if err != nil || n != 0 {
			t.Errorf("database %s left after its test: count %d, err %v", name, n, err)
		}
	}
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
