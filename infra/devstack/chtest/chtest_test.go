package chtest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/infra/clickhouse"
	"github.com/xbot-runtime/xbot/infra/devstack/chtest"
)

func TestMain(m *testing.M) { chtest.Main(m) }

func TestSharedIsOneServer(t *testing.T) {
	t.Parallel()
	first, second := chtest.Shared(t), chtest.Shared(t)
	if first != second {
		t.Fatal("Shared returned two servers")
	}
}

func TestNewDatabaseIsolatedAndDropped(t *testing.T) {
	t.Parallel()
	srv := chtest.Shared(t) // skips the whole test when ClickHouse is missing outside CI
	var names []string
	for range 2 {
		t.Run("sub/with odd-name", func(t *testing.T) {
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
			names = append(names, db)
		})
	}
	if names[0] == names[1] {
		t.Fatalf("two tests got database %s", names[0])
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	left, err := srv.Query(ctx, "SELECT name FROM system.databases WHERE name IN ('"+
		strings.Join(names, "','")+"')")
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(left) != "" {
		t.Errorf("databases left after their tests: %q", left)
	}
}
