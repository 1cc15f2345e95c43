package devstack_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/xbot-runtime/xbot/infra/clickhouse"
	"github.com/xbot-runtime/xbot/infra/devstack"
)

// startClickHouse starts a server on dir and stops it when the test ends. It
// skips the test when ClickHouse is not installed and CI is not set.
func startClickHouse(t *testing.T, dir string) *devstack.ClickHouse {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	ch, err := devstack.StartClickHouse(ctx, devstack.ClickHouseConfig{Dir: dir, Logger: zaptest.NewLogger(t)})
	if errors.Is(err, devstack.ErrClickHouseMissing) && !inCI() {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopClickHouse(t, ch) })
	return ch
}

func stopClickHouse(t *testing.T, ch *devstack.ClickHouse) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	started := time.Now()
	if err := ch.Stop(ctx); err != nil {
		t.Error(err)
	}
	t.Logf("clickhouse stopped in %s", time.Since(started))
}

func chQuery(t *testing.T, ch *devstack.ClickHouse, sql string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	out, err := ch.Query(ctx, sql)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(out)
}

func TestClickHouseStartStopKeepsData(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ch := startClickHouse(t, dir)
	if !strings.HasPrefix(ch.Addr(), "127.0.0.1:") || ch.TCPPort() == ch.HTTPPort() {
		t.Fatalf("addr %s, ports %d/%d", ch.Addr(), ch.TCPPort(), ch.HTTPPort())
	}
	db, err := ch.CreateDatabase(context.Background(), "Keep-Me")
	if err != nil {
		t.Fatal(err)
	}
	chQuery(t, ch, "CREATE TABLE "+db+".t (v UInt64) ENGINE = MergeTree ORDER BY v")
	chQuery(t, ch, "INSERT INTO "+db+".t VALUES (1), (2), (3)")
	stopClickHouse(t, ch)
	if err := ch.Stop(context.Background()); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	ch = startClickHouse(t, dir)
	if got := chQuery(t, ch, "SELECT sum(v) FROM "+db+".t"); got != "6" {
		t.Errorf("sum after restart = %q, want 6", got)
	}
	if err := ch.DropDatabase(context.Background(), "Keep-Me"); err != nil {
		t.Fatal(err)
	}
	if got := chQuery(t, ch, "SELECT count() FROM system.databases WHERE name = '"+db+"'"); got != "0" {
		t.Errorf("database left after DropDatabase: %s", got)
	}
}

// inCI reports whether CI is set to a true value (then a missing binary fails).
func inCI() bool {
	v := os.Getenv("CI")
	return v != "" && v != "0" && v != "false"
}

// A client that keeps its connection open must not hold up Stop.
func TestClickHouseStopWithOpenClient(t *testing.T) {
	t.Parallel()
	ch := startClickHouse(t, t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	conn, err := clickhouse.Connect(ctx, clickhouse.Config{Addr: ch.Addr(), Password: ch.Password()})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	if err := conn.Exec(ctx, "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	stopClickHouse(t, ch)
	if took := time.Since(started); took > 5*time.Second {
		t.Errorf("Stop took %s with an idle client connection", took)
	}
}
