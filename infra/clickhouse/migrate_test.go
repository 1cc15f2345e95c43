package clickhouse_test

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/xbot-runtime/xbot/infra/clickhouse"
)

// logged is a migration set where each file records itself in a table, so a
// file applied twice shows up as a duplicate row.
var logged = fstest.MapFS{
	"0002_second.sql": {Data: []byte("INSERT INTO applied SELECT 2, '0002';")},
	"0001_create.sql": {Data: []byte(`CREATE TABLE IF NOT EXISTS applied (n UInt32, file String)
		ENGINE = MergeTree ORDER BY n; -- a comment; with a semicolon
		INSERT INTO applied SELECT 1, '0001'`)},
	"0010_tenth.sql":    {Data: []byte("INSERT INTO applied SELECT 10, 'semi;colon'")},
	"README.md":         {Data: []byte("not a migration")},
	"subdir/0004_x.sql": {Data: []byte("this is ignored: not at the root")},
}

func TestMigrateAppliesInOrderOnce(t *testing.T) {
	t.Parallel()
	conn := newConn(t)
	for range 2 {
		if err := clickhouse.Migrate(context.Background(), conn, "core", logged); err != nil {
			t.Fatal(err)
		}
	}
	if got := strings.Join(column(t, conn, "SELECT file FROM applied ORDER BY n"), " "); got != "0001 0002 semi;colon" {
		t.Errorf("applied files in order %q", got)
	}
	versions := column(t, conn, "SELECT version FROM schema_migrations FINAL WHERE component = 'core' ORDER BY version")
	if got := strings.Join(versions, " "); got != "0001 0002 0010" {
		t.Errorf("recorded versions %q", got)
	}
}

func TestMigrateFailingFileIsRetried(t *testing.T) {
	t.Parallel()
	conn := newConn(t)
	files := fstest.MapFS{
		"0001_ok.sql":    {Data: []byte("CREATE TABLE IF NOT EXISTS a (v UInt8) ENGINE = Memory")},
		"0002_bad.sql":   {Data: []byte("CREATE TABLE IF NOT EXISTS b (v UInt8) ENGINE = Memory; SELECT * FROM missing_table")},
		"0003_later.sql": {Data: []byte("CREATE TABLE IF NOT EXISTS c (v UInt8) ENGINE = Memory")},
	}
	err := clickhouse.Migrate(context.Background(), conn, "core", files)
	if err == nil || !strings.Contains(err.Error(), "0002_bad.sql") {
		t.Fatalf("Migrate error = %v, want it to name 0002_bad.sql", err)
	}
	tables := column(t, conn, "SELECT name FROM system.tables WHERE database = currentDatabase() AND name IN ('a','b','c') ORDER BY name")
	if got := strings.Join(tables, " "); got != "a b" {
		t.Errorf("tables after failure = %q, want a b (no rollback in ClickHouse, c not attempted)", got)
	}
	files["0002_bad.sql"] = &fstest.MapFile{Data: []byte("CREATE TABLE IF NOT EXISTS b (v UInt8) ENGINE = Memory")}
	if err := clickhouse.Migrate(context.Background(), conn, "core", files); err != nil {
		t.Fatalf("Migrate after fixing the file: %v", err)
	}
	versions := column(t, conn, "SELECT version FROM schema_migrations FINAL ORDER BY version")
	if got := strings.Join(versions, " "); got != "0001 0002 0003" {
		t.Errorf("recorded versions = %q", got)
	}
}

func TestMigrateRejectsBadNames(t *testing.T) {
	t.Parallel()
	conn := newConn(t)
	cases := map[string]fstest.MapFS{
		"misnamed":  {"create.sql": {Data: []byte("SELECT 1")}},
		"duplicate": {"0001_a.sql": {Data: []byte("SELECT 1")}, "0001_b.sql": {Data: []byte("SELECT 1")}},
	}
	for name, files := range cases {
		if err := clickhouse.Migrate(context.Background(), conn, "core", files); err == nil {
			t.Errorf("%s: Migrate succeeded", name)
		}
	}
}
