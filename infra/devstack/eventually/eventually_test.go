package eventually_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
)

func TestWait(t *testing.T) {
	t.Parallel()
	errNo := errors.New("no")
	tests := []struct {
		name      string
		okAt      int // the call that first succeeds; 0 = never
		within    time.Duration
		wantErr   error
		wantCalls func(int) bool
	}{
		{"first call", 1, time.Second, nil, func(n int) bool { return n == 1 }},
		{"third call", 3, time.Second, nil, func(n int) bool { return n == 3 }},
		{"never, zero deadline: one call", 0, 0, errNo, func(n int) bool { return n == 1 }},
		{"never, short deadline: polls", 0, 5 * eventually.Interval, errNo, func(n int) bool { return n >= 2 }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			calls := 0
			err := eventually.Wait(tc.within, func() error {
				calls++
				if calls == tc.okAt {
					return nil
				}
				return errNo
			})
			if !errors.Is(err, tc.wantErr) || !tc.wantCalls(calls) {
				t.Errorf("Wait = %v after %d calls, want %v", err, calls, tc.wantErr)
			}
		})
	}
}

// recorder is a testing.TB that records a Fatalf instead of stopping.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) { r.failed = fmt.Sprintf(format, args...) }

func TestSucceedsAndHoldsReportWhatTheyWaitedFor(t *testing.T) {
	t.Parallel()
	r := &recorder{TB: t}
	eventually.Succeeds(r, 0, "the view", func() error { return errors.New("2 of 3 runs") })
	if !strings.Contains(r.failed, "the view") || !strings.Contains(r.failed, "2 of 3 runs") {
		t.Errorf("Succeeds failed with %q", r.failed)
	}
	r = &recorder{TB: t}
	eventually.Holds(r, 0, "the listener", func() bool { return false })
	if !strings.Contains(r.failed, "the listener") {
		t.Errorf("Holds failed with %q", r.failed)
	}
	r = &recorder{TB: t}
	eventually.SucceedsEvery(r, 0, time.Hour, "the slow view", func() error { return errors.New("1 of 3 runs") })
	if !strings.Contains(r.failed, "the slow view") || !strings.Contains(r.failed, "1 of 3 runs") {
		t.Errorf("SucceedsEvery failed with %q", r.failed)
	}
	r = &recorder{TB: t}
	eventually.Holds(r, time.Second, "ok", func() bool { return true })
	if r.failed != "" {
		t.Errorf("Holds of a true condition failed: %q", r.failed)
	}
}

// TestScale: a deadline of Succeeds is multiplied by the scale the
// environment sets, and a setting that is not a whole number from 1 on is
// ignored.
func TestScale(t *testing.T) {
	t.Setenv("XBOT_TEST_KAFKA", "")
	t.Setenv(eventually.ScaleEnv, "4")
	if got := eventually.Scale(); got != 4 {
		t.Errorf("Scale() = %d with %s=4", got, eventually.ScaleEnv)
	}
	r := &recorder{TB: t}
	eventually.Succeeds(r, 5*time.Millisecond, "the view", func() error { return errors.New("not yet") })
	if !strings.Contains(r.failed, "not within 20ms") {
		t.Errorf("a 5ms deadline scaled 4 times failed with %q", r.failed)
	}
	for _, bad := range []string{"0", "-2", "x", ""} {
		t.Setenv(eventually.ScaleEnv, bad)
		if got := eventually.Scale(); got != 1 {
			t.Errorf("Scale() = %d with %s=%q, want 1", got, eventually.ScaleEnv, bad)
		}
	}
	t.Setenv("XBOT_TEST_KAFKA", "apache")
	if got := eventually.Scale(); got != 3 {
		t.Errorf("Scale() = %d on Apache Kafka, want 3", got)
	}
}
