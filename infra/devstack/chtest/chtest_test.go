package chtest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/infra/clickhouse"
	"github.com/xbot-runtime/xbot/infra/devstack/chtest"
	"github.com/xbot-runtime/xbot/infra/devstack/internal/sharedsrv"
)

func TestMain(m *testing.M) { chtest.Main(m) }

func TestNewDatabaseIsolatedAndDropped(t *testing.T) {
	t.Parallel()
	srv := chtest.Shared(t) // skips the whole test when ClickHouse is missing outside CI
	sharedsrv.CheckDatabases(t, func(t *testing.T) string {
		cfg := chtest.NewDatabase(t)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		conn, err := clickhouse.Connect(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = conn.Close() }()
		var db string
		if err := conn.QueryRow(ctx, "SELECT currentDatabase()").Scan(&db); err != nil {
			t.Fatal(err)
		}
		if db != cfg.Database {
			t.Errorf("connected to %s, want %s", db, cfg.Database)
		}
		return db
	}, func(t *testing.T, name string) bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		left, err := srv.Query(ctx, "SELECT name FROM system.databases WHERE name = '"+name+"'")
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(left) != ""
	})
}
