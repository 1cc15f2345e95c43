package clickhouse

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"sort"
	"strings"
)

// migrationName matches NNNN_description.sql; the digits are the version.
var migrationName = regexp.MustCompile(`^([0-9]+)_[^/]+\.sql$`)

// createMigrationsTable records applied files. ReplacingMergeTree folds a
// version recorded twice by concurrent runs into one row.
const createMigrationsTable = `CREATE TABLE IF NOT EXISTS schema_migrations (
	component  String,
	version    String,
	applied_at DateTime
) ENGINE = ReplacingMergeTree ORDER BY (component, version)`

// migration is one file to apply.
type migration struct {
	file    string
	version string
}

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
	list, err := listMigrations(files)
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
		if applied[m.version] {
			continue
		}
		if err := applyOne(ctx, conn, name, m, files); err != nil {
			return fmt.Errorf("migrate %s: apply %s: %w", name, m.file, err)
		}
	}
	return nil
}

// listMigrations returns the migration files at the root of files in lexical
// order, rejecting misnamed .sql files and duplicate versions.
func listMigrations(files fs.FS) ([]migration, error) {
	entries, err := fs.ReadDir(files, ".")
	if err != nil {
		return nil, fmt.Errorf("list migration files: %w", err)
	}
	var list []migration
	seen := map[string]string{}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".sql") {
			continue
		}
		m := migrationName.FindStringSubmatch(e.Name())
		if m == nil {
			return nil, fmt.Errorf("migration file %s: name must be NNNN_description.sql", e.Name())
		}
		if prev, dup := seen[m[1]]; dup {
			return nil, fmt.Errorf("migration files %s and %s share version %s", prev, e.Name(), m[1])
		}
		seen[m[1]] = e.Name()
		list = append(list, migration{file: e.Name(), version: m[1]})
	}
	sort.Slice(list, func(i, j int) bool { return list[i].file < list[j].file })
	return list, nil
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
func applyOne(ctx context.Context, conn *Conn, name string, m migration, files fs.FS) error {
	body, err := fs.ReadFile(files, m.file)
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
		name, m.version)
	if err != nil {
		return fmt.Errorf("record version %s: %w", m.version, err)
	}
	return nil
}
