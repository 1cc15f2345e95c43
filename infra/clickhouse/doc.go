// Package clickhouse connects to ClickHouse over the native protocol, applies
// schema migrations and sends batch inserts. It is the only package besides
// the devstack harness that imports clickhouse-go.
//
// The driver is pinned at github.com/ClickHouse/clickhouse-go/v2 v2.25.0, the
// newest release whose batch insert works against Debian's ClickHouse 18.16;
// everything here keeps to what 18.16 understands.
//
// Guarantees:
//
//   - Connect returns a connection only after a successful ping. Its errors
//     name the address, database and user, never the password.
//   - Every call made through this package carries a deadline: a context
//     without one gets Config.QueryTimeout (ClickHouse can hang forever on a
//     malformed insert), and the driver's read timeout bounds each read.
//   - Migrate records each applied file in schema_migrations and skips it
//     afterwards. ClickHouse has no transactions: a file that fails halfway
//     keeps the statements that ran and is run again from its first
//     statement next time, so every statement of a migration must be
//     idempotent (CREATE … IF NOT EXISTS, ALTER … ADD COLUMN IF NOT EXISTS).
//     Concurrent Migrate calls are not serialised; with idempotent statements
//     they do no harm.
//   - Insert sends one batch: the server receives all of its rows in one
//     block or, on error, the batch is aborted. An insert whose outcome is
//     unknown (a timeout) may still have landed; callers write idempotently.
package clickhouse
