// Package computetest holds what the tests of sandbox providers and of the
// systems that run them share: a directory the unprivileged sandbox user
// can reach (Dir) and the live processes a test started (Processes).
//
// It imports only the standard library and is meant for tests, including
// the provider suite in contracttests.
package computetest
