package executor_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/engine/profile"
)

// createRunOn is createRun for a given sandbox key.
func createRunOn(t *testing.T, sk events.SandboxKey, key, agent string) commands.Envelope {
	t.Helper()
	return createRunWith(t, sk, key, agent, "go")
}

// createRunWith is createRunOn with input content.
func createRunWith(t *testing.T, sk events.SandboxKey, key, agent, content string) commands.Envelope {
	t.Helper()
	c, err := commands.New(commands.CreateRun, commands.Header{RunID: commands.RunIDFor(sk.TenantID, key, sk, testPartitions),
		PlatformSessionID: "sess-1", TenantID: sk.TenantID, Actor: events.Actor{Type: "user", ID: "u1"}, IdempotencyKey: key},
		commands.CreateRunPayload{AgentID: agent, Input: events.UserInput{Content: content}, SandboxKey: sk})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// at returns when the run's first event of type typ occurred (0: never).
func at(t *testing.T, h *harness, runID string, typ events.Type) int64 {
	t.Helper()
	evs, err := readRun(h, runID)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if e.Type == typ {
			return e.OccurredAt
		}
	}
	return 0
}

// TestRunsOfOneSandboxKeyTakeTurns: the key's runs start one at a time in
// the order they were accepted, each recording its place in the key's queue
// when it joins and when it moves up; a run cancelled while it waits is
// skipped; a cancelled holder releases the key; another key's run does not
// wait.
func TestRunsOfOneSandboxKeyTakeTurns(t *testing.T) {
	t.Parallel()
	// Every run streams until it is cancelled (holdProfile), so the holder
	// holds the key however long the broker's commits and the log reads
	// take.
	h := newHarness(t, holdProfile())
	h.startExecutor("ex1", nil)
	shared := events.SandboxKey{TenantID: "acme", WorkspaceID: "w", AgentID: "slow", OwnerID: "team"}
	other := shared
	other.OwnerID = "solo"
	a1, a2, a3 := createRunOn(t, shared, "a1", "slow"), createRunOn(t, shared, "a2", "slow"), createRunOn(t, shared, "a3", "slow")
	b1 := createRunOn(t, other, "b1", "slow")
	for _, c := range []commands.Envelope{a1, a2, a3, b1} {
		h.send(c)
	}
	h.waitFor("a1 and b1 streaming while a2 and a3 wait", func(m map[string]events.RunState) bool {
		return count(h, a1.RunID, events.ItemDelta) >= 2 && count(h, b1.RunID, events.ItemDelta) >= 2 &&
			m[a2.RunID].Status == events.StatusQueued && m[a3.RunID].Status == events.StatusQueued
	})
	h.send(cancelRun(t, "acme", a2.RunID, "cancel-a2")) // a queued run: cancelled at once, never started
	h.waitFor("a2 cancelled and a3 moved up", func(m map[string]events.RunState) bool {
		return m[a2.RunID].Status == events.StatusCancelled && m[a3.RunID].QueuePosition == 1
	})
	if p2, p3 := positions(t, h, a2.RunID), positions(t, h, a3.RunID); !slices.Equal(p2, []int{1}) || !slices.Equal(p3, []int{2, 1}) {
		t.Fatalf("a2 recorded places %v and a3 %v, want [1] and [2 1]", p2, p3)
	}
	// The holder's cancel frees the key for a3.
	h.send(cancelRun(t, "acme", a1.RunID, "cancel-a1"))
	h.waitFor("a1 cancelled and a3 streaming", func(m map[string]events.RunState) bool {
		return m[a1.RunID].Status == events.StatusCancelled && count(h, a3.RunID, events.ItemDelta) >= 1
	})
	h.send(cancelRun(t, "acme", a3.RunID, "cancel-a3"))
	h.send(cancelRun(t, "acme", b1.RunID, "cancel-b1"))
	h.waitFor("a3 and b1 cancelled", func(m map[string]events.RunState) bool {
		return m[a3.RunID].Status == events.StatusCancelled && m[b1.RunID].Status == events.StatusCancelled
	})
	if at(t, h, a2.RunID, events.RunStarted) != 0 {
		t.Error("a2 started although it was cancelled while it waited")
	}
	released := at(t, h, a1.RunID, events.RunCancelled)
	if released == 0 {
		t.Fatal("a1 is cancelled without a runtime.run.cancelled event")
	}
	if started := at(t, h, a3.RunID, events.RunStarted); started < released {
		t.Errorf("a3 started at %d, before a1 released the key at %d", started, released)
	}
	if started := at(t, h, b1.RunID, events.RunStarted); started >= released {
		t.Errorf("b1, of another key, started at %d, only after a1 ended at %d", started, released)
	}
}

// yieldKey is the sandbox key of the yield tests' runs.
var yieldKey = events.SandboxKey{TenantID: "acme", WorkspaceID: "w", AgentID: "gated", OwnerID: "team"}

func gatedProfile() profile.Profile {
	return profile.Profile{ID: "gated", Model: profile.ModelScripted, Script: []profile.Turn{{Text: "unused"}}}
}

// createOn is a CreateRun of the yield key whose input tells gateEngine
// what the run does.
func createOn(t *testing.T, key, input string) commands.Envelope {
	t.Helper()
	return createRunWith(t, yieldKey, key, "gated", input)
}

func pausedOnApproval(runID string) func(map[string]events.RunState) bool {
	return func(m map[string]events.RunState) bool {
		return m[runID].Status == events.StatusPaused && len(m[runID].AwaitingApproval()) == 1
	}
}

// TestAPausedRunYieldsItsSandboxKey: while a run waits for an approval, the
// next run of its key starts and completes; approved with the key free, the
// paused run resumes at once (no queue) and completes.
func TestAPausedRunYieldsItsSandboxKey(t *testing.T) {
	t.Parallel()
	h := newHarness(t, gatedProfile())
	g := &gateExecutors{h: h, e: newGateEngine()}
	g.start("ex1")
	first, second := createOn(t, "y-first", "ask"), createOn(t, "y-second", "done")
	h.send(first)
	h.waitFor("the first run paused on its approval", pausedOnApproval(first.RunID))
	h.send(second)
	h.waitFor("the second run completed while the first waits", func(m map[string]events.RunState) bool {
		return m[second.RunID].Status == events.StatusCompleted && pausedOnApproval(first.RunID)(m)
	})
	h.send(approve(t, first.RunID, "y-first-ok"))
	h.waitFor("the first run completed", statusIs(first.RunID, events.StatusCompleted))
	if p := positions(t, h, first.RunID); len(p) != 0 {
		t.Errorf("the first run queued at %v although its key was free when it was approved", p)
	}
	want := []string{first.RunID + ":runtime.run.started", second.RunID + ":runtime.run.started", first.RunID + ":runtime.run.resumed"}
	if got := keyTurns(t, h, first.RunID, second.RunID); !slices.Equal(got, want) {
		t.Errorf("turns %v, want %v", got, want)
	}
}

// yieldQueue builds, on executor ex1, three runs paused on approvals, a
// fourth holding the key, and the three approved in the order 2, 3, 1 while
// it holds it: each waits queued, in the order it was resumed.
func yieldQueue(t *testing.T, h *harness) (asks []commands.Envelope, holder commands.Envelope) {
	t.Helper()
	for i := range 3 {
		asks = append(asks, createOn(t, fmt.Sprintf("q-ask-%d", i), "ask"))
		h.send(asks[i])
		h.waitFor("run paused", pausedOnApproval(asks[i].RunID))
	}
	holder = createOn(t, "q-hold", "hold")
	h.send(holder)
	h.waitFor("the holder runs", func(m map[string]events.RunState) bool { return m[holder.RunID].Items.Len() > 0 })
	for place, i := range []int{1, 2, 0} {
		id := asks[i].RunID
		h.send(approve(t, id, id+"-ok"))
		h.waitFor("the approved run waits queued", func(m map[string]events.RunState) bool {
			return m[id].Status == events.StatusQueued && m[id].Requeued && m[id].QueuePosition == place+1
		})
	}
	return asks, holder
}

// TestResumedRunsWaitTheirTurnInResumeOrder: runs approved while another run
// holds their key wait queued, first resumed first; each records its place
// and moves up; none runs while another does.
func TestResumedRunsWaitTheirTurnInResumeOrder(t *testing.T) {
	t.Parallel()
	h := newHarness(t, gatedProfile())
	g := &gateExecutors{h: h, e: newGateEngine()}
	g.start("ex1")
	asks, holder := yieldQueue(t, h)
	g.e.open()
	checkResumeOrder(t, h, asks, holder)
}

// TestResumeOrderSurvivesATakeover: the executor owning the key's partition
// dies with three resumed runs queued behind the holder; the new owner,
// rebuilding from the checkpoints, resumes them in the same order.
func TestResumeOrderSurvivesATakeover(t *testing.T) {
	t.Parallel()
	h := newHarness(t, gatedProfile())
	g := &gateExecutors{h: h, e: newGateEngine()}
	ex1 := g.start("ex1")
	asks, holder := yieldQueue(t, h)
	ex1.Kill()
	g.start("ex2")
	h.waitFor("the new owner restored the holder", func(map[string]events.RunState) bool {
		return count(h, holder.RunID, events.RunCheckpointRestored) == 1
	})
	g.e.open()
	checkResumeOrder(t, h, asks, holder)
}

func checkResumeOrder(t *testing.T, h *harness, asks []commands.Envelope, holder commands.Envelope) {
	t.Helper()
	h.waitFor("every run completed", func(m map[string]events.RunState) bool {
		for _, c := range append(asks, holder) {
			if m[c.RunID].Status != events.StatusCompleted {
				return false
			}
		}
		return true
	})
	ids := []string{asks[0].RunID, asks[1].RunID, asks[2].RunID, holder.RunID}
	got := keyTurns(t, h, ids...)
	resumed := slices.DeleteFunc(slices.Clone(got), func(s string) bool { return !strings.HasSuffix(s, ":runtime.run.resumed") })
	want := []string{asks[1].RunID, asks[2].RunID, asks[0].RunID}
	for i := range want {
		want[i] += ":runtime.run.resumed"
	}
	if !slices.Equal(resumed, want) {
		t.Errorf("resumed in the order %v, want %v (turns %v)", resumed, want, got)
	}
	for i, wantPlaces := range [][]int{{3, 2, 1}, {1}, {2, 1}} {
		if p := positions(t, h, asks[i].RunID); !slices.Equal(p, wantPlaces) {
			t.Errorf("run %d recorded places %v, want %v", i, p, wantPlaces)
		}
	}
}

// TestARunStartedFromTheQueueYieldsWhenItPauses: a run that waited for its
// key, started by the scheduler and paused at once (its start and its pause
// may commit together), yields the key to the next queued run.
func TestARunStartedFromTheQueueYieldsWhenItPauses(t *testing.T) {
	t.Parallel()
	h := newHarness(t, gatedProfile())
	g := &gateExecutors{h: h, e: newGateEngine()}
	g.start("ex1")
	holder, asker, next := createOn(t, "s-hold", "hold"), createOn(t, "s-ask", "ask"), createOn(t, "s-next", "done")
	h.send(holder)
	h.waitFor("the holder runs", func(m map[string]events.RunState) bool { return m[holder.RunID].Items.Len() > 0 })
	h.send(asker)
	h.send(next)
	h.waitFor("both wait", func(m map[string]events.RunState) bool {
		return m[asker.RunID].QueuePosition == 1 && m[next.RunID].QueuePosition == 2
	})
	g.e.open()
	h.waitFor("the last run completed while the asker waits", func(m map[string]events.RunState) bool {
		return m[next.RunID].Status == events.StatusCompleted && pausedOnApproval(asker.RunID)(m)
	})
	h.send(approve(t, asker.RunID, "s-ask-ok"))
	h.waitFor("the asker completed", statusIs(asker.RunID, events.StatusCompleted))
	want := []string{holder.RunID + ":runtime.run.started", asker.RunID + ":runtime.run.started",
		next.RunID + ":runtime.run.started", asker.RunID + ":runtime.run.resumed"}
	if got := keyTurns(t, h, holder.RunID, asker.RunID, next.RunID); !slices.Equal(got, want) {
		t.Errorf("turns %v, want %v", got, want)
	}
}

// TestARunFailingAfterItsResumeFreesTheKey: a run whose engine fails when it
// gets its key after a resume ends failed (resumed, then failed) and the
// key goes on to the next run.
func TestARunFailingAfterItsResumeFreesTheKey(t *testing.T) {
	t.Parallel()
	h := newHarness(t, gatedProfile())
	g := &gateExecutors{h: h, e: newGateEngine()}
	g.start("ex1")
	failing, holder, next := createOn(t, "f-ask", "ask-fail"), createOn(t, "f-hold", "hold"), createOn(t, "f-next", "done")
	h.send(failing)
	h.waitFor("the run paused", pausedOnApproval(failing.RunID))
	h.send(holder)
	h.waitFor("the holder runs", func(m map[string]events.RunState) bool { return m[holder.RunID].Items.Len() > 0 })
	h.send(approve(t, failing.RunID, "f-ask-ok"))
	h.waitFor("the approved run waits", func(m map[string]events.RunState) bool { return m[failing.RunID].Requeued })
	h.send(next)
	g.e.open()
	states := h.waitFor("the failed run freed the key", func(m map[string]events.RunState) bool {
		return m[failing.RunID].Status == events.StatusFailed && m[next.RunID].Status == events.StatusCompleted
	})
	if code := states[failing.RunID].ErrorCode; code != events.FailInternal {
		t.Errorf("the run failed with %q, want %q", code, events.FailInternal)
	}
}
