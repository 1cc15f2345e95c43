package postgres_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/xbot-runtime/xbot/infra/postgres"
)

// logged is a migration set where each file records itself in a table, so a
// file applied twice shows up as a duplicate row (or fails on CREATE TABLE).
var logged = fstest.MapFS{
	"0002_second.sql":   {Data: []byte("INSERT INTO applied VALUES ('0002');")},
	"0001_create.sql":   {Data: []byte("CREATE TABLE applied (file text); INSERT INTO applied VALUES ('0001');")},
	"0010_tenth.sql":    {Data: []byte("ALTER TABLE applied ADD COLUMN n int; INSERT INTO applied VALUES ('0010', 10);")},
	"README.md":         {Data: []byte("not a migration")},
	"0003_third.sql":    {Data: []byte("INSERT INTO applied VALUES ('0003');")},
	"subdir/0004_x.sql": {Data: []byte("this is ignored: not at the root")},
}

func TestMigrateAppliesInOrderOnce(t *testing.T) {
	t.Parallel()
	pool := newPool(t)
	ctx := context.Background()
	for range 2 {
		if err := postgres.Migrate(ctx, pool, "core", logged); err != nil {
			t.Fatal(err)
		}
	}
	if got := strings.Join(column(t, pool, "SELECT file FROM applied ORDER BY ctid"), " "); got != "0001 0002 0003 0010" {
		t.Errorf("applied files in order %q", got)
	}
	versions := column(t, pool, "SELECT version FROM schema_migrations WHERE component = 'core' ORDER BY version")
	if got := strings.Join(versions, " "); got != "0001 0002 0003 0010" {
		t.Errorf("recorded versions %q", got)
	}
}

func TestMigrateConcurrently(t *testing.T) {
	t.Parallel()
	pool := newPool(t)
	const workers = 8
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() { errs <- postgres.Migrate(context.Background(), pool, "core", logged) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if got := strings.Join(column(t, pool, "SELECT file FROM applied ORDER BY ctid"), " "); got != "0001 0002 0003 0010" {
		t.Errorf("applied files %q, want each exactly once in order", got)
	}
}

func TestMigrateFailingFile(t *testing.T) {
	t.Parallel()
	pool := newPool(t)
	files := fstest.MapFS{
		"0001_ok.sql":    {Data: []byte("CREATE TABLE a (v int);")},
		"0002_bad.sql":   {Data: []byte("CREATE TABLE b (v int); SELECT * FROM missing_table;")},
		"0003_later.sql": {Data: []byte("CREATE TABLE c (v int);")},
	}
	err := postgres.Migrate(context.Background(), pool, "core", files)
	if err == nil || !strings.Contains(err.Error(), "0002_bad.sql") {
		t.Fatalf("Migrate error = %v, want it to name 0002_bad.sql", err)
	}
	tables := column(t, pool, "SELECT tablename FROM pg_tables WHERE tablename IN ('a','b','c') ORDER BY 1")
	if got := strings.Join(tables, " "); got != "a" {
		t.Errorf("tables after failure = %q, want only a (b rolled back, c not attempted)", got)
	}
	if got := strings.Join(column(t, pool, "SELECT version FROM schema_migrations"), " "); got != "0001" {
		t.Errorf("recorded versions = %q, want 0001", got)
	}
}

func TestMigrateComponentsAreIndependent(t *testing.T) {
	t.Parallel()
	pool := newPool(t)
	ctx := context.Background()
	a := fstest.MapFS{"0001_a.sql": {Data: []byte("CREATE TABLE a (v int);")}}
	b := fstest.MapFS{"0001_b.sql": {Data: []byte("CREATE TABLE b (v int);")}}
	for name, files := range map[string]fstest.MapFS{"alpha": a, "beta": b} {
		if err := postgres.Migrate(ctx, pool, name, files); err != nil {
			t.Fatal(err)
		}
	}
	got := strings.Join(column(t, pool, "SELECT component || '/' || version FROM schema_migrations ORDER BY 1"), " ")
	if got != "alpha/0001 beta/0001" {
		t.Errorf("recorded %q", got)
	}
}

func TestMigrateRejectsBadNames(t *testing.T) {
	t.Parallel()
	pool := newPool(t)
	cases := map[string]fstest.MapFS{
		"misnamed":  {"create.sql": {Data: []byte("SELECT 1")}},
		"duplicate": {"0001_a.sql": {Data: []byte("SELECT 1")}, "0001_b.sql": {Data: []byte("SELECT 1")}},
	}
	for name, files := range cases {
		if err := postgres.Migrate(context.Background(), pool, "core", files); err == nil {
			t.Errorf("%s: Migrate succeeded", name)
		}
	}
}

// column returns the first column of sql's rows as text.
func column(t *testing.T, pool *pgxpool.Pool, sql string) []string {
	t.Helper()
	rows, err := pool.Query(context.Background(), sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return out
}
