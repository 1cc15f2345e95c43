package eventually

import (
	"errors"
	"os"
	"strconv"
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
//
// within is multiplied by Scale: it bounds how long a test waits for what
// the protocol guarantees will happen, never how fast it happens, so where
// every commit takes longer (a real broker's replication) it is lengthened
// rather than failing a test that is right. A test that passes costs no
// more; one that fails reports later.
func SucceedsEvery(tb testing.TB, within, every time.Duration, what string, fn func() error) {
	tb.Helper()
	within *= time.Duration(Scale())
	if err := WaitEvery(within, every, fn); err != nil {
		tb.Fatalf("%s: not within %s: %v", what, within, err)
	}
}

// ScaleEnv names the environment variable that sets Scale (a whole number,
// at least 1).
const ScaleEnv = "XBOT_TEST_DEADLINE_SCALE"

// Scale is what Succeeds, Holds and SucceedsEvery multiply their deadlines
// by: ScaleEnv when set, else 3 on a real Apache Kafka cluster
// (XBOT_TEST_KAFKA=apache: three replicas to acknowledge every commit, on a
// machine that also runs the brokers), else 1. Wait and WaitEvery, whose
// callers may expect the deadline to pass, are never scaled.
func Scale() int {
	if n, err := strconv.Atoi(os.Getenv(ScaleEnv)); err == nil && n >= 1 {
		return n
	}
	if os.Getenv("XBOT_TEST_KAFKA") == "apache" {
		return 3
	}
	return 1
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
