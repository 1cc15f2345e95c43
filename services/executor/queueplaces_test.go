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
	h := newHarness(t, holdProfile())
	h.startExecutor("ex1", nil)
	key := events.SandboxKey{TenantID: "acme", WorkspaceID: "w", AgentID: "slow", OwnerID: "deep"}
	holder := createRunOn(t, key, "holder", "slow")
	h.send(holder)
	h.waitFor("the holder streams", func(map[string]events.RunState) bool {
		return count(h, holder.RunID, events.ItemDelta) >= 1
	})
	queued := make([]commands.Envelope, waiting)
	for i := range queued {
		queued[i] = createRunOn(t, key, fmt.Sprintf("q%02d", i), "slow")
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
	h.send(cancelRun(t, "acme", queued[waiting-1].RunID, "cancel-last"))
	h.send(cancelRun(t, "acme", holder.RunID, "cancel-holder"))
	h.waitFor("the last run and the holder cancelled", func(m map[string]events.RunState) bool {
		return m[queued[waiting-1].RunID].Status == events.StatusCancelled && m[holder.RunID].Status == events.StatusCancelled
	})
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
