package clickhouse_test

import (
	"context"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/infra/clickhouse"
	"github.com/xbot-runtime/xbot/infra/devstack/chtest"
)

func TestMain(m *testing.M) { chtest.Main(m) }

// testTimeout bounds the database work of one test.
const testTimeout = time.Minute

// newConn connects to a fresh database of its own, closed when t ends.
func newConn(t *testing.T) *clickhouse.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	conn, err := clickhouse.Connect(ctx, chtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// column returns the first column of query's rows, a String column.
func column(t *testing.T, conn *clickhouse.Conn, query string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	rows, err := conn.Query(ctx, query)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer func() { _ = rows.Close() }()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return out
}
