package clickhouse

import (
	"context"
	"embed"
	"io/fs"

	chinfra "github.com/xbot-runtime/xbot/infra/clickhouse"
)

// Component is the name under which Migrations are recorded by
// infra/clickhouse.Migrate.
const Component = "projection_clickhouse"

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrations holds the schema of this projection as NNNN_name.sql files at
// its root, for infra/clickhouse.Migrate(ctx, conn, Component, Migrations).
var Migrations = mustSub(migrationFiles, "migrations")

// Migrate applies Migrations to the database of conn.
func Migrate(ctx context.Context, conn *chinfra.Conn) error {
	return chinfra.Migrate(ctx, conn, Component, Migrations)
}

func mustSub(f fs.FS, dir string) fs.FS {
	sub, err := fs.Sub(f, dir)
	if err != nil {
		panic("projections/clickhouse: embedded migrations: " + err.Error()) // impossible: dir is embedded above
	}
	return sub
}
