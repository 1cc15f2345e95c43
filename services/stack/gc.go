package stack

import (
	"os"
	"runtime/debug"
)

// DefaultGCPercent is the garbage collector's target (GOGC) of the xbot
// processes when the GOGC environment variable does not set one. Go's
// default, 100, collects each time the heap doubles; an xbot process
// allocates mostly short-lived buffers per event and per SSE chunk, and at
// 100 the collector took 10–20 % of its CPU under load and, at 1,000 runs
// streaming at once, was the difference between a delta's p99 above and
// below 100 ms (docs/performance.md). At 200 the heap may grow to three times
// what is live; GOMEMLIMIT bounds it where memory is tight.
const DefaultGCPercent = 200

// TuneGC sets the garbage collector's target to DefaultGCPercent unless
// GOGC is set, and returns the target in effect (-1: collection is off).
// A process calls it once, at its start.
func TuneGC() int {
	if os.Getenv("GOGC") != "" {
		p := debug.SetGCPercent(100)
		debug.SetGCPercent(p)
		return p
	}
	debug.SetGCPercent(DefaultGCPercent)
	return DefaultGCPercent
}
