// Package pgtest gives tests a PostgreSQL server and a fresh database each.
//
// A test binary starts at most one server (lazily, on the first Shared or
// NewDatabase call), in a temporary directory; Main stops it and removes the
// directory after all tests ran. Each NewDatabase call creates a database no
// other test uses and drops it when the test ends. If the PostgreSQL binaries
// are missing, tests fail (never skip) with a message naming the package to
// install.
//
// Use it from TestMain:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
//
//	func TestX(t *testing.T) {
//		dsn := pgtest.NewDatabase(t)
//		...
//	}
package pgtest
