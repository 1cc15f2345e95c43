package systemtest_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/services/api/client"
	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/stack"
)

// interrupt interrupts session's current reply as acme under key and waits
// for the outcome; an error answer fails the test.
func interrupt(t testing.TB, st *stack.Stack, session string, cancelQueued bool, key string) sessionAnswer {
	t.Helper()
	res, err := apiOf(t, st).InterruptSession(t.Context(), session, client.InterruptRequest{CancelQueued: cancelQueued},
		client.CommandOptions{IdempotencyKey: key, Wait: client.WaitFor(10 * time.Second)})
	if refused(err) != nil {
		t.Fatalf("interrupt %s: %v", key, err)
	}
	return res
}

// gatedAgent runs a shell call that waits for file gate, then answers.
func gatedAgent(gate string) profile.Profile {
	return profile.Profile{ID: "gated", Model: profile.ModelScripted, Tools: []string{"shell"}, Script: []profile.Turn{
		{Text: "Working.", ToolCalls: call1("shell", fmt.Sprintf(`{"command":"while [ ! -f %s ]; do sleep 0.02; done"}`, gate))},
		{Text: "Done."},
	}}
}

// busySession starts session's first run of the gated agent, waits until
// its tool runs, and queues a message on it.
func busySession(t *testing.T, st *stack.Stack, session, queued string) (first, steer sessionAnswer) {
	t.Helper()
	first = message(t, st, session, "gated", "build it", session+"-1")
	waitItem(t, st, first.RunID, events.ItemCommandExecution)
	steer = message(t, st, session, "", queued, session+"-2")
	wantRouted(t, steer, "steer")
	return first, steer
}

func TestSessionInterruptKeepsQueuedMessagesAsTheNextRun(t *testing.T) {
	t.Parallel()
	gate := filepath.Join(t.TempDir(), "gate")
	e, st, _ := agentEnv(t, gatedAgent(gate))
	first, steer := busySession(t, st, "sess-int-keep", "use the dev branch")
	res := interrupt(t, st, "sess-int-keep", false, "int-1")
	if res.RunID != first.RunID || (res.Outcome != client.OutcomeAccepted && res.Outcome != client.OutcomeApplied) {
		t.Fatalf("interrupt: %+v", res)
	}
	waitStatus(t, st, first.RunID, "cancelled", 10*time.Second)
	if err := os.WriteFile(gate, nil, 0o600); err != nil { // the next run's tool call may finish
		t.Fatal(err)
	}
	var next string
	eventually.Succeeds(t, 10*time.Second, "the queued message's outcome", func() error {
		cmd, err := apiOf(t, st).GetCommand(t.Context(), steer.CommandID)
		if err != nil || cmd.Outcome != client.OutcomeApplied || cmd.CreatedRunID == "" {
			return fmt.Errorf("%+v: %w", cmd, err)
		}
		next = cmd.CreatedRunID
		return nil
	})
	run := waitStatus(t, st, next, "completed", 10*time.Second)
	if run.ParentRunID != first.RunID || run.PlatformSessionID != "sess-int-keep" {
		t.Errorf("next run %+v", run)
	}
	if n := timesSaid(t, st, first.RunID, "use the dev branch") + timesSaid(t, st, next, "use the dev branch"); n != 1 {
		t.Errorf("the queued message is in the session's logs %d times, want once", n)
	}
	// The session goes on: the next message follows the kept run up.
	after := message(t, st, "sess-int-keep", "", "thanks", "sess-int-keep-3")
	wantRouted(t, after, "follow_up")
	if run := waitStatus(t, st, after.RunID, "completed", 10*time.Second); run.ParentRunID != next {
		t.Errorf("the message after the interrupt follows up %s, want %s", run.ParentRunID, next)
	}
	e.invariants(st)
}

func TestSessionInterruptDropsQueuedMessages(t *testing.T) {
	t.Parallel()
	gate := filepath.Join(t.TempDir(), "gate")
	e, st, _ := agentEnv(t, gatedAgent(gate))
	first, steer := busySession(t, st, "sess-int-drop", "use the dev branch")
	interrupt(t, st, "sess-int-drop", true, "int-2")
	waitStatus(t, st, first.RunID, "cancelled", 10*time.Second)
	eventually.Succeeds(t, 10*time.Second, "the queued message's outcome", func() error {
		cmd, err := apiOf(t, st).GetCommand(t.Context(), steer.CommandID)
		if err != nil || cmd.Outcome != client.OutcomeNoEffect {
			return fmt.Errorf("%+v: %w", cmd, err)
		}
		return nil
	})
	if n := timesSaid(t, st, first.RunID, "use the dev branch"); n != 0 {
		t.Errorf("a dropped message is in the run's log %d times", n)
	}
	// Nothing is in progress now: another interrupt changes nothing; a retry
	// of the first is its duplicate.
	if res := interrupt(t, st, "sess-int-drop", true, "int-3"); res.Outcome != client.OutcomeNoEffect {
		t.Errorf("interrupt of an idle session: %+v", res)
	}
	if res := interrupt(t, st, "sess-int-drop", true, "int-2"); res.Outcome != client.OutcomeDuplicate || res.RunID != first.RunID {
		t.Errorf("retried interrupt: %+v", res)
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	after := message(t, st, "sess-int-drop", "", "start over", "sess-int-drop-3")
	wantRouted(t, after, "follow_up")
	waitStatus(t, st, after.RunID, "completed", 10*time.Second)
	e.invariants(st)
}

func TestSessionInterruptOfAnUnknownSessionIs404(t *testing.T) {
	t.Parallel()
	_, st, _ := agentEnv(t, echoAgent())
	_, err := apiOf(t, st).InterruptSession(t.Context(), "sess-nobody", client.InterruptRequest{CancelQueued: true}, client.CommandOptions{})
	if !isProblem(err, http.StatusNotFound, "not_found") {
		t.Fatalf("interrupt of an unknown session: %v", err)
	}
}

// TestSessionCommandsOfAnotherOwnersSession: the session's first message
// makes its actor the owner; another actor of the tenant can neither send to
// it nor interrupt it.
func TestSessionCommandsOfAnotherOwnersSession(t *testing.T) {
	t.Parallel()
	_, st, _ := agentEnv(t, echoAgent())
	alice, bob := apiClient(t, st, aliceToken, nil), apiClient(t, st, bobToken, nil)
	if _, err := alice.SendSessionMessage(t.Context(), "sess-alice", client.SessionMessageRequest{Content: "hi", AgentID: "chat"},
		client.CommandOptions{IdempotencyKey: "alice-1", Wait: client.WaitFor(10 * time.Second)}); err != nil {
		t.Fatalf("alice's first message: %v", err)
	}
	_, err := bob.SendSessionMessage(t.Context(), "sess-alice", client.SessionMessageRequest{Content: "let me in", AgentID: "chat"},
		client.CommandOptions{IdempotencyKey: "bob-1"})
	if !isProblem(err, http.StatusForbidden, "forbidden_scope") {
		t.Errorf("bob's message to alice's session: %v, want 403 forbidden_scope", err)
	}
	_, err = bob.InterruptSession(t.Context(), "sess-alice", client.InterruptRequest{CancelQueued: true}, client.CommandOptions{IdempotencyKey: "bob-2"})
	if !isProblem(err, http.StatusForbidden, "forbidden_scope") {
		t.Errorf("bob's interrupt of alice's session: %v, want 403 forbidden_scope", err)
	}
}
