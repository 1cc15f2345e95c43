package postgres

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/xbot-runtime/xbot/infra/migrations"
)

// createTableLockKey serialises CREATE TABLE IF NOT EXISTS across processes:
// two concurrent creations of the same table can otherwise fail with a unique
// violation on pg_type. The value is arbitrary but fixed forever.
const createTableLockKey int64 = 0x7363_6865_6d61 // "schema"

const createTableSQL = `CREATE TABLE IF NOT EXISTS schema_migrations (
	component  text        NOT NULL,
	version    text        NOT NULL,
	applied_at timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (component, version)
)`

// Migrate applies the migration files at the root of files to the database of
// pool for the component name. Files are named NNNN_description.sql; the NNNN
// prefix is the version recorded in schema_migrations(component, version,
// applied_at). Other files are ignored; a .sql file not following the pattern,
// or two files with the same version, is an error before anything is applied.
//
// Files are applied in lexical order, each in its own transaction together
// with its schema_migrations row, under pg_advisory_xact_lock of a hash of
// name; a file whose version is already recorded is skipped. So running
// Migrate twice, or concurrently from several goroutines or processes, applies
// every file exactly once. If a file fails, its transaction is rolled back,
// earlier files stay applied, later files are not attempted, and the error
// names the file. A file must not contain statements that cannot run inside
// a transaction block (e.g. CREATE INDEX CONCURRENTLY).
func Migrate(ctx context.Context, pool *pgxpool.Pool, name string, files fs.FS) error {
	if name == "" {
		return errors.New("migrate: component name is empty")
	}
	list, err := migrations.List(files)
	if err != nil {
		return fmt.Errorf("migrate %s: %w", name, err)
	}
	if err := ensureTable(ctx, pool); err != nil {
		return fmt.Errorf("migrate %s: %w", name, err)
	}
	key := lockKey(name)
	for _, m := range list {
		body, err := fs.ReadFile(files, m.Name)
		if err != nil {
			return fmt.Errorf("migrate %s: read %s: %w", name, m.Name, err)
		}
		if err := applyOne(ctx, pool, key, name, m, string(body)); err != nil {
			return fmt.Errorf("migrate %s: apply %s: %w", name, m.Name, err)
		}
	}
	return nil
}

// ensureTable creates schema_migrations if it does not exist yet.
func ensureTable(ctx context.Context, pool *pgxpool.Pool) error {
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", createTableLockKey); err != nil {
			return fmt.Errorf("lock: %w", err)
		}
		if _, err := tx.Exec(ctx, createTableSQL); err != nil {
			return fmt.Errorf("create: %w", err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("ensure schema_migrations table: %w", err)
	}
	return nil
}

// applyOne applies m in one transaction unless its version is recorded.
func applyOne(ctx context.Context, pool *pgxpool.Pool, key int64, name string, m migrations.File, body string) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", key); err != nil {
			return fmt.Errorf("advisory lock: %w", err)
		}
		var applied bool
		err := tx.QueryRow(ctx,
			"SELECT EXISTS (SELECT 1 FROM schema_migrations WHERE component = $1 AND version = $2)",
			name, m.Version).Scan(&applied)
		if err != nil {
			return fmt.Errorf("check applied: %w", err)
		}
		if applied {
			return nil
		}
		// No arguments: pgx uses the simple protocol, so a file may hold
		// several statements.
		if _, err := tx.Exec(ctx, body); err != nil {
			return err
		}
		_, err = tx.Exec(ctx,
			"INSERT INTO schema_migrations (component, version) VALUES ($1, $2)", name, m.Version)
		if err != nil {
			return fmt.Errorf("record version %s: %w", m.Version, err)
		}
		return nil
	})
}

// lockKey derives the advisory lock key of a component. FNV-1a is stable
// across processes and Go versions, unlike hash/maphash.
func lockKey(name string) int64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte("schema_migrations:" + name))
	return int64(h.Sum64()) //nolint:gosec // wrap-around is intended: any 64-bit key works
}
