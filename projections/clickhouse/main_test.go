package clickhouse_test

import (
	"context"
	"os"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	chinfra "github.com/xbot-runtime/xbot/infra/clickhouse"
	"github.com/xbot-runtime/xbot/infra/devstack/chtest"
	"github.com/xbot-runtime/xbot/infra/devstack/kafkatest"
	"github.com/xbot-runtime/xbot/projections/clickhouse"
	"github.com/xbot-runtime/xbot/projections/runner"
)

func TestMain(m *testing.M) { os.Exit(chtest.Run(kafkatest.Wrap(m))) }

// testTimeout bounds the database work of one test.
const testTimeout = time.Minute

// fixture is a projector on a fresh, migrated database of its own.
type fixture struct {
	conn *chinfra.Conn
	p    *clickhouse.Projector
}

func newFixture(tb testing.TB) *fixture {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	conn, err := chinfra.Connect(ctx, chtest.NewDatabase(tb))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = conn.Close() })
	if err := clickhouse.Migrate(ctx, conn); err != nil {
		tb.Fatal(err)
	}
	return &fixture{conn: conn, p: clickhouse.New(conn, zaptest.NewLogger(tb))}
}

// apply applies recs in batches of size n, failing tb on any error.
func (f *fixture) apply(tb testing.TB, recs []runner.Record, n int) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	for i := 0; i < len(recs); i += n {
		if err := f.p.Apply(ctx, recs[i:min(i+n, len(recs))]); err != nil {
			tb.Fatal(err)
		}
	}
}

func (f *fixture) checksums(tb testing.TB) map[string]clickhouse.Checksum {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	c, err := f.p.Checksums(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// count returns the single UInt64 that query yields.
func (f *fixture) count(tb testing.TB, query string) uint64 {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	var n uint64
	if err := f.conn.QueryRow(ctx, query).Scan(&n); err != nil {
		tb.Fatalf("%s: %v", query, err)
	}
	return n
}

// strs returns the first column, a String, of query's rows.
func (f *fixture) strs(tb testing.TB, query string) []string {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	rows, err := f.conn.Query(ctx, query)
	if err != nil {
		tb.Fatalf("%s: %v", query, err)
	}
	defer func() { _ = rows.Close() }()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			tb.Fatal(err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

// eventCount is the number of events in logs.
func eventCount(logs []*runLog) (events, outcomes uint64) {
	for _, l := range logs {
		for _, e := range l.Events() {
			events++
			if isOutcome(string(e.Type)) {
				outcomes++
			}
		}
	}
	return events, outcomes
}

func isOutcome(t string) bool {
	return t == "runtime.run.accepted" || len(t) > len("runtime.command.") && t[:len("runtime.command.")] == "runtime.command."
}
