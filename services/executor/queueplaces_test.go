package executor_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
)

// TestADeepQueueRecordsFewerPlaces: 40 runs wait behind a holder and leave
// the queue from the front one at a time. A run within ten of the front
// records every new place; further back it records a place only once it has
// halved since the last one it recorded, so the queue records 404 places as
// it drains instead of 820, and no shown place is more than twice the real
// one.
func TestADeepQueueRecordsFewerPlaces(t *testing.T) {
	t.Parallel()
	const waiting = 40
	// The holder holds the key until the gate opens, however long the
	// cancels take.
	h := newHarness(t, gatedProfile())
	g := &gateExecutors{h: h, e: newGateEngine()}
	g.start("ex1")
	holder := createOn(t, "holder", "hold")
	h.send(holder)
	h.waitFor("the holder holds the key", func(m map[string]events.RunState) bool {
		return m[holder.RunID].Status == events.StatusRunning
	})
	queued := make([]commands.Envelope, waiting)
	for i := range queued {
		queued[i] = createOn(t, fmt.Sprintf("q%02d", i), "done")
		h.send(queued[i])
	}
	h.waitFor("every run queued", func(m map[string]events.RunState) bool {
		return m[queued[waiting-1].RunID].QueuePosition == waiting
	})
	// Cancel the front run; once the next one shows place 1, the pass that
	// recorded the places after that departure has committed.
	for i := range waiting - 1 {
		h.send(cancelRun(t, "acme", queued[i].RunID, fmt.Sprintf("cancel-q%02d", i)))
		next := queued[i+1].RunID
		h.waitFor(fmt.Sprintf("q%02d at the front", i+1), func(m map[string]events.RunState) bool {
			return m[next].QueuePosition == 1
		})
	}
	g.e.open()
	last := queued[waiting-1].RunID
	h.waitFor("the holder and then the last run completed", func(m map[string]events.RunState) bool {
		return m[holder.RunID].Status == events.StatusCompleted && m[last].Status == events.StatusCompleted
	})
	total := 0
	for i, c := range queued {
		got := positions(t, h, c.RunID)
		if want := wantPlaces(i + 1); !slices.Equal(got, want) {
			t.Errorf("the run that joined at place %d recorded %v, want %v", i+1, got, want)
		}
		total += len(got)
	}
	if total != 404 {
		t.Errorf("the queue recorded %d places as it drained, want 404", total)
	}
}

// wantPlaces is what a run that joined at place j records as the runs ahead
// of it leave one at a time: j, then each place that is at most half the
// last recorded one, then every place from 10 down to 1.
func wantPlaces(j int) []int {
	out := []int{j}
	for p := j - 1; p >= 1; p-- {
		if p <= 10 || 2*p <= out[len(out)-1] {
			out = append(out, p)
		}
	}
	return out
}
