// Package eventually polls a condition in a test until it holds or a deadline
// passes, instead of sleeping for a guessed time.
//
// A test waits for what the system guarantees to happen eventually (a run
// reaching a status, a view catching up); the deadline is a bound on a slow
// machine, never a measurement. When the deadline passes the test fails with
// what it waited for and the condition's last error.
//
//	eventually.Succeeds(t, 10*time.Second, "run completed", func() error { … })
//	eventually.Holds(t, 10*time.Second, "listener closed", func() bool { … })
package eventually
