package clickhouse

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"slices"
	"testing/fstest"

	chinfra "github.com/xbot-runtime/xbot/infra/clickhouse"
)

// Component is the name under which Migrations are recorded by
// infra/clickhouse.Migrate.
const Component = "projection_clickhouse"

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrations holds the schema of this projection as NNNN_name.sql files at
// its root. Apply them with Migrate, which makes the files that add columns
// idempotent.
var Migrations = mustSub(migrationFiles, "migrations")

// addedColumns lists, per migration file, the audit_events columns its one
// ALTER TABLE … ADD COLUMN statement adds.
var addedColumns = map[string][]string{
	"0002_governance.sql": {"rule_id", "approval_id", "grant_id"},
}

// Migrate applies Migrations to the database of conn.
//
// ClickHouse 18.16 has no ALTER … ADD COLUMN IF NOT EXISTS, so a file that
// adds columns is not idempotent by itself: if its ALTER took effect but the
// file was not recorded (the call timed out but actually succeeded, or the
// process stopped in between), running it again would fail for ever. So a
// file of addedColumns whose columns all exist already is applied as an
// empty file, which only records it. One ALTER adds its columns together or
// not at all; a file whose columns exist only in part fails, for a person
// to look at.
func Migrate(ctx context.Context, conn *chinfra.Conn) error {
	files, err := withoutAppliedAlters(ctx, conn)
	if err != nil {
		return fmt.Errorf("migrate %s: %w", Component, err)
	}
	return chinfra.Migrate(ctx, conn, Component, files)
}

// withoutAppliedAlters returns Migrations with every file of addedColumns
// whose columns all exist replaced by a comment.
func withoutAppliedAlters(ctx context.Context, conn *chinfra.Conn) (fs.FS, error) {
	have, err := eventColumnNames(ctx, conn)
	if err != nil {
		return nil, err
	}
	out := fstest.MapFS{}
	err = fs.WalkDir(Migrations, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := fs.ReadFile(Migrations, name)
		if err != nil {
			return err
		}
		if cols, ok := addedColumns[name]; ok && allIn(cols, have) {
			body = []byte("-- The columns of this file exist already: nothing to do.\n")
		}
		out[name] = &fstest.MapFile{Data: body, Mode: 0o444}
		return nil
	})
	return out, err
}

// eventColumnNames returns the columns of audit_events (none before 0001).
func eventColumnNames(ctx context.Context, conn *chinfra.Conn) ([]string, error) {
	ctx, cancel := conn.WithTimeout(ctx)
	defer cancel()
	rows, err := conn.Query(ctx, "SELECT name FROM system.columns WHERE database = currentDatabase() AND table = 'audit_events'")
	if err != nil {
		return nil, fmt.Errorf("read the columns of audit_events: %w", err)
	}
	defer func() { _ = rows.Close() }()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, fmt.Errorf("read the columns of audit_events: %w", err)
		}
		names = append(names, n)
	}
	return names, rows.Err()
}

func allIn(want, have []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

func mustSub(f fs.FS, dir string) fs.FS {
	sub, err := fs.Sub(f, dir)
	if err != nil {
		panic("projections/clickhouse: embedded migrations: " + err.Error()) // impossible: dir is embedded above
	}
	return sub
}
