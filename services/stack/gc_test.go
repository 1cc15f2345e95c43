package stack_test

import (
	"runtime/debug"
	"testing"

	"github.com/xbot-runtime/xbot/services/stack"
)

// TestTuneGCKeepsAnOperatorsGOGC: the default target applies only when GOGC
// is not set; an operator's GOGC, "off" included, wins.
func TestTuneGCKeepsAnOperatorsGOGC(t *testing.T) {
	prev := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(prev) })
	for _, tc := range []struct {
		env  string
		set  int // what the runtime read from GOGC at start
		want int
	}{
		{"", 100, stack.DefaultGCPercent},
		{"50", 50, 50},
		{"off", -1, -1},
	} {
		t.Setenv("GOGC", tc.env)
		debug.SetGCPercent(tc.set)
		if got := stack.TuneGC(); got != tc.want {
			t.Errorf("GOGC=%q: TuneGC() = %d, want %d", tc.env, got, tc.want)
		}
		if got := debug.SetGCPercent(100); got != tc.want {
			t.Errorf("GOGC=%q: the runtime's target is %d, want %d", tc.env, got, tc.want)
		}
	}
}
