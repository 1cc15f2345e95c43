// Package postgres connects to PostgreSQL and applies schema migrations.
//
// Guarantees:
//
//   - Connect returns a pool only after a successful ping; no error it returns
//     contains the password of the DSN (see RedactDSN).
//   - Migrate applies each migration file of a component at most once, in
//     lexical order, each in its own transaction. Concurrent Migrate calls for
//     the same component, from any number of processes, are serialised by a
//     transaction-scoped advisory lock, so a file is never applied twice.
//     A failing file is rolled back; the files before it stay applied and the
//     returned error names the file.
package postgres
