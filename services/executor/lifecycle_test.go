package executor_test

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/devstack/kafkatest"
	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/services/engine/profile"
)

func slowProfile() profile.Profile {
	turn := profile.Turn{Text: strings.Repeat("one two three four five six seven eight nine ten ", 4), ChunkChars: 4, Delay: 30 * time.Millisecond}
	return profile.Profile{ID: "slow", Model: profile.ModelScripted, Script: []profile.Turn{turn}}
}

// holdProfile is slowProfile streaming for at least five minutes (10,000
// chunks 30 ms apart): a test that cancels its runs can count on them still
// running when the cancel lands, however slow the broker and the machine
// are. (At a twentieth of that, 30 s, a holder outlived a loaded CI run of
// TestADeepQueueRecordsFewerPlaces's 39 cancels only just, and once not.)
func holdProfile() profile.Profile {
	p := slowProfile()
	p.Script[0].Text = strings.Repeat(p.Script[0].Text, 200)
	return p
}

func types(t *testing.T, h *harness, runID string) []events.Type {
	t.Helper()
	var out []events.Type
	h.waitFor("events of "+runID, func(map[string]events.RunState) bool { return true })
	evs, err := readRun(h, runID)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		out = append(out, e.Type)
	}
	return out
}

func TestRunGoesQueuedRunningCompleted(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.startExecutor("ex1", nil)
	c := createRun(t, "acme", "k1", "demo", "hello")
	h.send(c)
	states := h.waitFor("completed", statusIs(c.RunID, events.StatusCompleted))
	st := states[c.RunID]
	if st.AgentID != "demo" || st.TenantID != "acme" || st.Input.Content != "hello" {
		t.Fatalf("unexpected run state %+v", st)
	}
	got := types(t, h, c.RunID)
	if got[0] != events.RunAccepted || got[1] != events.CapabilitySnapshotFrozen || got[2] != events.RunStarted || got[3] != events.ItemStarted ||
		got[len(got)-2] != events.ItemCompleted || got[len(got)-1] != events.RunCompleted {
		t.Fatalf("unexpected event sequence %v", got)
	}
}

func TestSameCommandDeliveredTwiceTakesEffectOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.startExecutor("ex1", nil)
	c := createRun(t, "acme", "twice", "demo", "hi")
	h.send(c)
	h.send(c)                                            // the very same record content: a redelivery
	again := createRun(t, "acme", "twice", "demo", "hi") // a client retry: same key, new command id
	h.send(again)
	h.waitFor("completed and two duplicates", func(m map[string]events.RunState) bool {
		return m[c.RunID].Status == events.StatusCompleted && count(h, c.RunID, events.CommandDuplicate) == 2
	})
	if n := count(h, c.RunID, events.RunAccepted); n != 1 {
		t.Fatalf("run accepted %d times, want 1", n)
	}
	if n := count(h, c.RunID, events.RunStarted); n != 1 {
		t.Fatalf("run started %d times, want 1", n)
	}
}

func TestCancelWhileRunningAndAfterCompletion(t *testing.T) {
	t.Parallel()
	h := newHarness(t, holdProfile())
	h.startExecutor("ex1", nil)
	c := createRun(t, "acme", "c1", "slow", "x")
	h.send(c)
	h.waitFor("streaming", func(map[string]events.RunState) bool { return count(h, c.RunID, events.ItemDelta) >= 2 })
	h.send(cancelRun(t, "acme", c.RunID, "cancel-1"))
	states := h.waitFor("cancelled", statusIs(c.RunID, events.StatusCancelled))
	if r := states[c.RunID].CancelReason; r != "user asked" {
		t.Fatalf("cancel reason %q", r)
	}
	if n := count(h, c.RunID, events.RunCompleted); n != 0 {
		t.Fatalf("a cancelled run completed")
	}
	// Cancel after the end: no_effect, state unchanged.
	h.send(cancelRun(t, "acme", c.RunID, "cancel-2"))
	h.waitFor("no_effect", func(map[string]events.RunState) bool { return count(h, c.RunID, events.CommandNoEffect) == 1 })
	d := createRun(t, "acme", "c2", "demo", "y")
	h.send(d)
	h.waitFor("completed", statusIs(d.RunID, events.StatusCompleted))
	h.send(cancelRun(t, "acme", d.RunID, "cancel-3"))
	states = h.waitFor("no_effect on completed", func(map[string]events.RunState) bool {
		return count(h, d.RunID, events.CommandNoEffect) == 1
	})
	if states[d.RunID].Status != events.StatusCompleted {
		t.Fatalf("status changed to %s", states[d.RunID].Status)
	}
}

func TestExecutorKilledMidTransactionAnotherTakesOver(t *testing.T) {
	t.Parallel()
	h := newHarness(t, slowProfile())
	var killed atomic.Bool
	var victim atomic.Pointer[executorKiller]
	hooks := &kafka.Hooks{BeforeCommit: func(_ int32, recs []kafka.OutRecord) {
		if kafkatest.MidStream(recs) && killed.CompareAndSwap(false, true) {
			victim.Load().Kill() // the transaction is flushed but never ended, mid-stream
		}
	}}
	exA := h.startExecutor("exA", hooks)
	victim.Store(&executorKiller{exA})
	c := createRun(t, "acme", "crash", "slow", "x")
	h.send(c)
	h.waitFor("the first executor died", func(map[string]events.RunState) bool { return killed.Load() })
	h.startExecutor("exB", nil)
	states := h.waitFor("completed by exB", statusIs(c.RunID, events.StatusCompleted))
	if n := count(h, c.RunID, events.RunAccepted); n != 1 {
		t.Fatalf("run accepted %d times", n)
	}
	if n := count(h, c.RunID, events.RunCheckpointRestored); n != 1 {
		t.Fatalf("checkpoint_restored %d times, want 1", n)
	}
	// The stream the first executor lost is closed runtime_lost and repeated.
	if got := completedAssistantMessages(states[c.RunID]); got != 1 {
		t.Fatalf("completed assistant messages = %d, want 1", got)
	}
}

type executorKiller struct{ ex interface{ Kill() } }

func (k *executorKiller) Kill() { k.ex.Kill() }

func completedAssistantMessages(st events.RunState) int {
	n := 0
	for it := range st.Items.All() {
		if it.Type == events.ItemAssistantMessage && it.Status == events.ItemStatusCompleted {
			n++
		}
	}
	return n
}
