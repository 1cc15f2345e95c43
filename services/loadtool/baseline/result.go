package baseline

import (
	"time"

	"github.com/xbot-runtime/xbot/events"
)

// Result is one baseline's measurement.
type Result struct {
	// Events is how many envelopes were written.
	Events int `json:"events"`
	// Elapsed is the wall time of the writes alone (no setup).
	Elapsed time.Duration `json:"elapsedNs"`
	// EventsPerSec is Events / Elapsed.
	EventsPerSec float64 `json:"eventsPerSec"`
}

func result(n int, elapsed time.Duration) Result {
	r := Result{Events: n, Elapsed: elapsed}
	if elapsed > 0 {
		r.EventsPerSec = float64(n) / elapsed.Seconds()
	}
	return r
}

// Event is an envelope with its encoded form, as the log holds it.
type Event struct {
	events.Envelope
	Raw []byte
}

// batches cuts evs into slices of at most size.
func batches(evs []Event, size int) [][]Event {
	var out [][]Event
	for len(evs) > 0 {
		n := min(size, len(evs))
		out = append(out, evs[:n])
		evs = evs[n:]
	}
	return out
}
