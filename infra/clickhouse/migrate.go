package clickhouse

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/xbot-runtime/xbot/infra/migrations"
)

// createMigrationsTable records applied files. ReplacingMergeTree folds a
// version recorded twice by concurrent runs into one row.
const createMigrationsTable = `CREATE TABLE IF NOT EXISTS schema_migrations (
	component  String,
	version    String,
	applied_at DateTime
) ENGINE = ReplacingMergeTree ORDER BY (component, version)`

// Migrate applies the migration files at the root of files to the database of
// conn for the component name. Files are named NNNN_description.sql; the
// NNNN prefix is the version recorded in schema_migrations(component,
// version, applied_at). Other files are ignored; a .sql file not following
// the pattern, or two files with the same version, is an error before
// anything is applied.
//
// Files are applied in lexical order, statement by statement (a file may hold
// several, separated by ';'), and recorded after their last statement; a
// recorded version is skipped. If a statement fails, the error names the
// file, later files are not attempted, and the file is run again from its
// start by the next Migrate. See the package doc: statements must be
// idempotent. Data goes in with INSERT … SELECT: INSERT … VALUES is refused
// (see Conn.Exec).
func Migrate(ctx context.Context, conn *Conn, name string, files fs.FS) error {
	if name == "" {
		return errors.New("migrate: component name is empty")
	}
	list, err := migrations.List(files)
	if err != nil {
		return fmt.Errorf("migrate %s: %w", name, err)
	}
	if err := conn.Exec(ctx, createMigrationsTable); err != nil {
		return fmt.Errorf("migrate %s: create schema_migrations: %w", name, err)
	}
	applied, err := appliedVersions(ctx, conn, name)
	if err != nil {
		return fmt.Errorf("migrate %s: %w", name, err)
	}
	for _, m := range list {
		if applied[m.Version] {
			continue
		}
		if err := applyOne(ctx, conn, name, m, files); err != nil {
			return fmt.Errorf("migrate %s: apply %s: %w", name, m.Name, err)
		}
	}
	return nil
}

// appliedVersions returns the versions recorded for component name.
func appliedVersions(ctx context.Context, conn *Conn, name string) (map[string]bool, error) {
	ctx, cancel := withDeadline(ctx, conn.cfg.QueryTimeout)
	defer cancel()
	rows, err := conn.Query(ctx, "SELECT DISTINCT version FROM schema_migrations WHERE component = ?", name)
	if err != nil {
		return nil, fmt.Errorf("read applied versions: %w", err)
	}
	defer func() { _ = rows.Close() }()
	applied := map[string]bool{}
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, fmt.Errorf("read applied versions: %w", err)
		}
		applied[v] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read applied versions: %w", err)
	}
	return applied, nil
}

// applyOne runs the statements of m and records its version.
func applyOne(ctx context.Context, conn *Conn, name string, m migrations.File, files fs.FS) error {
	body, err := fs.ReadFile(files, m.Name)
	if err != nil {
		return fmt.Errorf("read: %w", err)
	}
	stmts, err := SplitStatements(string(body))
	if err != nil {
		return err
	}
	for i, stmt := range stmts {
		if err := conn.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("statement %d: %w", i+1, err)
		}
	}
	err = conn.Exec(ctx, "INSERT INTO schema_migrations (component, version, applied_at) SELECT ?, ?, now()",
		name, m.Version)
	if err != nil {
		return fmt.Errorf("record version %s: %w", m.Version, err)
	}
	return nil
}
