// Package postgrestest gives a test the Postgres read models on a database
// of its own, as pgtest gives it a database: a fresh database of the test
// binary's shared server, migrated to the current schema. The package's
// TestMain must call pgtest.Main (or pgtest.Run).
package postgrestest
