// Package contracttests holds conformance suites that any implementation of
// xbot's contracts can run against itself: today the event-log invariant
// (DESIGN §2.2), checked on the events topic and on the Postgres read model.
package contracttests
