// Package chtest gives tests a ClickHouse server and a fresh database each.
//
// A test binary starts at most one server (lazily, on the first Shared or
// NewDatabase call), in a temporary directory; Main stops it and removes the
// directory after all tests ran. Each NewDatabase call creates a database no
// other test uses and drops it when the test ends.
//
// If the ClickHouse binary is missing, tests are skipped with a message naming
// the package to install, unless the environment variable CI is set (to
// anything but "", "0" or "false"): then they fail, so CI never passes by
// skipping.
//
// Use it from TestMain:
//
//	func TestMain(m *testing.M) { chtest.Main(m) }
//
//	func TestX(t *testing.T) {
//		conn, err := clickhouse.Connect(ctx, chtest.NewDatabase(t))
//		...
//	}
package chtest
