package postgres

import (
	"embed"
	"io/fs"
)

// Component is the name under which Migrations are recorded by
// infra/postgres.Migrate.
const Component = "projection_postgres"

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrations holds the schema of this projection as NNNN_name.sql files at
// its root, for infra/postgres.Migrate(ctx, pool, Component, Migrations).
var Migrations = mustSub(migrationFiles, "migrations")

func mustSub(f fs.FS, dir string) fs.FS {
	sub, err := fs.Sub(f, dir)
	if err != nil {
		panic("projections/postgres: embedded migrations: " + err.Error()) // impossible: dir is embedded above
	}
	return sub
}
