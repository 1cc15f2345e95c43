package eventually

import (
	"errors"
	"testing"
	"time"
)

// Interval is the pause between two polls: short enough that a test does not
// wait noticeably past the moment the condition holds, long enough that a
// poll loop does not compete with the system under test for the CPU.
const Interval = 10 * time.Millisecond

// errNotYet is the error Holds reports for a condition that returned false.
var errNotYet = errors.New("condition does not hold")

// Succeeds calls fn until it returns nil. If within passes first, it fails tb
// (FailNow) naming what and fn's last error. It calls fn at least once.
func Succeeds(tb testing.TB, within time.Duration, what string, fn func() error) {
	tb.Helper()
	SucceedsEvery(tb, within, Interval, what, fn)
}

// Holds calls cond until it returns true. If within passes first, it fails
// tb (FailNow) naming what. It calls cond at least once.
func Holds(tb testing.TB, within time.Duration, what string, cond func() bool) {
	tb.Helper()
	Succeeds(tb, within, what, func() error {
		if cond() {
			return nil
		}
		return errNotYet
	})
}

// Wait calls fn every Interval until it returns nil, and returns nil; once
// within has passed it returns fn's last error instead. It calls fn at least
// once. Wait is Succeeds for callers that must not fail a test from the
// current goroutine.
func Wait(within time.Duration, fn func() error) error {
	return WaitEvery(within, Interval, fn)
}

// SucceedsEvery is Succeeds polling every interval instead of Interval, for
// a condition that is costly to check or a poll that also drives the test
// (one fault injected per poll).
func SucceedsEvery(tb testing.TB, within, every time.Duration, what string, fn func() error) {
	tb.Helper()
	if err := WaitEvery(within, every, fn); err != nil {
		tb.Fatalf("%s: not within %s: %v", what, within, err)
	}
}

// WaitEvery is Wait polling every interval instead of Interval.
func WaitEvery(within, every time.Duration, fn func() error) error {
	deadline := time.Now().Add(within)
	for {
		err := fn()
		if err == nil {
			return nil
		}
		if !time.Now().Before(deadline) {
			return err
		}
		<-time.After(every)
	}
}
