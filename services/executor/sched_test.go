package executor_test

import (
	"testing"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
)

// createRunOn is createRun for a given sandbox key.
func createRunOn(t *testing.T, sk events.SandboxKey, key, agent string) commands.Envelope {
	t.Helper()
	c, err := commands.New(commands.CreateRun, commands.Header{RunID: commands.RunIDFor(sk.TenantID, key, sk, testPartitions),
		PlatformSessionID: "sess-1", TenantID: sk.TenantID, Actor: events.Actor{Type: "user", ID: "u1"}, IdempotencyKey: key},
		commands.CreateRunPayload{AgentID: agent, Input: events.UserInput{Content: "go"}, SandboxKey: sk})
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
// the order they were accepted; a run cancelled while it waits is skipped;
// a cancelled holder releases the key; another key's run does not wait.
func TestRunsOfOneSandboxKeyTakeTurns(t *testing.T) {
	t.Parallel()
	h := newHarness(t, slowProfile())
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
	h.waitFor("a2 cancelled", statusIs(a2.RunID, events.StatusCancelled))
	// The holder: its end frees the key for a3. Its script may also end
	// before the cancel lands (a real broker's commits take longer than the
	// script's pauses); then the cancel has no effect and the run's
	// completion frees the key instead.
	h.send(cancelRun(t, "acme", a1.RunID, "cancel-a1"))
	states := h.waitFor("a3 and b1 completed", func(m map[string]events.RunState) bool {
		return m[a3.RunID].Status == events.StatusCompleted && m[b1.RunID].Status == events.StatusCompleted &&
			m[a1.RunID].Status.Terminal()
	})
	end := events.RunCancelled
	if states[a1.RunID].Status == events.StatusCompleted {
		end = events.RunCompleted
	}
	if at(t, h, a2.RunID, events.RunStarted) != 0 {
		t.Error("a2 started although it was cancelled while it waited")
	}
	released := at(t, h, a1.RunID, end)
	if released == 0 {
		t.Fatalf("a1 is %s without a %s event", states[a1.RunID].Status, end)
	}
	if started := at(t, h, a3.RunID, events.RunStarted); started < released {
		t.Errorf("a3 started at %d, before a1 released the key at %d", started, released)
	}
	if started := at(t, h, b1.RunID, events.RunStarted); started >= released {
		t.Errorf("b1, of another key, started at %d, only after a1 ended at %d", started, released)
	}
}
