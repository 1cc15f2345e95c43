package systemtest_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/api/client"
	"github.com/xbot-runtime/xbot/services/engine/policy"
	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/stack"
)

// The session-level submit (POST /v1/sessions/{id}/messages): the executor
// routes each message by the state of the session's head run
// (docs/sessions.md).

// sessionAnswer is the answer of a session command.
type sessionAnswer = client.SessionCommandResult

// message sends content to session as acme under key, with agentID for a
// session's first run, and waits for the outcome; an error answer (other
// than a rejection, which the answer says) fails the test.
func message(t testing.TB, st *stack.Stack, session, agentID, content, key string) sessionAnswer {
	t.Helper()
	return sendMessage(t, st, session, client.SessionMessageRequest{Content: content, AgentID: agentID}, key)
}

// sendMessage is message with the whole request.
func sendMessage(t testing.TB, st *stack.Stack, session string, req client.SessionMessageRequest, key string) sessionAnswer {
	t.Helper()
	res, err := apiOf(t, st).SendSessionMessage(t.Context(), session, req,
		client.CommandOptions{IdempotencyKey: key, Wait: client.WaitFor(10 * time.Second)})
	if refused(err) != nil {
		t.Fatalf("session message %s: %v", key, err)
	}
	return res
}

// wantRouted fails unless a is an admitted message that became intent.
func wantRouted(t testing.TB, a sessionAnswer, intent string) {
	t.Helper()
	if a.Intent != intent || a.RunID == "" || (a.Outcome != client.OutcomeAccepted && a.Outcome != client.OutcomeApplied) {
		t.Fatalf("session message became %+v, want %s", a, intent)
	}
}

// timesSaid is how often content is in run runID's log as what the user
// said: the run's input or a user_message item.
func timesSaid(t testing.TB, st *stack.Stack, runID, content string) int {
	t.Helper()
	n := 0
	for _, p := range payloads[events.RunAcceptedPayload](t, st, runID) {
		if p.Input.Content == content {
			n++
		}
	}
	for _, p := range payloads[events.ItemStartedPayload](t, st, runID) {
		if p.ItemType == events.ItemUserMessage && p.Content == content {
			n++
		}
	}
	return n
}

func TestSessionMessageFirstRunNextRunAndRetry(t *testing.T) {
	t.Parallel()
	e, st, _ := agentEnv(t, echoAgent())
	first := message(t, st, "sess-msg-1", "chat", "hello", "m-1")
	wantRouted(t, first, "follow_up")
	waitStatus(t, st, first.RunID, "completed", 10*time.Second)
	if again := message(t, st, "sess-msg-1", "chat", "hello", "m-1"); again.Outcome != client.OutcomeDuplicate ||
		again.RunID != first.RunID || again.Intent != "follow_up" || again.CommandID != first.CommandID {
		t.Fatalf("retry of the first message: %+v, want a duplicate of %+v", again, first)
	}
	next := message(t, st, "sess-msg-1", "", "and again", "m-2")
	wantRouted(t, next, "follow_up")
	run := waitStatus(t, st, next.RunID, "completed", 10*time.Second)
	if next.RunID == first.RunID || run.ParentRunID != first.RunID || run.PlatformSessionID != "sess-msg-1" {
		t.Fatalf("next run %+v of first %s", run, first.RunID)
	}
	// A retry names the run its first attempt created, though the session moved on.
	if again := message(t, st, "sess-msg-1", "", "and again", "m-2"); again.Outcome != client.OutcomeDuplicate ||
		again.RunID != next.RunID || again.Intent != "follow_up" {
		t.Fatalf("retry of the second message: %+v, want a duplicate naming %s", again, next.RunID)
	}
	// Another body under a used key is refused.
	if _, err := apiOf(t, st).SendSessionMessage(t.Context(), "sess-msg-1", client.SessionMessageRequest{Content: "something else"},
		client.CommandOptions{IdempotencyKey: "m-2"}); !isProblem(err, http.StatusUnprocessableEntity, "idempotency_key_reused") {
		t.Fatalf("another body under key m-2: %v", err)
	}
	// Keys are tenant-wide: the same message under a used key in another
	// session is another request, not a retry of the first.
	if _, err := apiOf(t, st).SendSessionMessage(t.Context(), "sess-msg-1-other", client.SessionMessageRequest{Content: "hello", AgentID: "chat"},
		client.CommandOptions{IdempotencyKey: "m-1"}); !isProblem(err, http.StatusUnprocessableEntity, "idempotency_key_reused") {
		t.Fatalf("key m-1 in another session: %v", err)
	}
	e.invariants(st)
}

func TestSessionMessageBadInput(t *testing.T) {
	t.Parallel()
	_, st, _ := agentEnv(t, echoAgent())
	path := "/v1/sessions/sess-bad/messages"
	for name, tc := range map[string]struct {
		body any
		hdr  []string
		code string
	}{
		"no idempotency key":           {map[string]any{"content": "hi", "agentId": "chat"}, nil, "validation_failed"},
		"no content":                   {map[string]any{"agentId": "chat"}, []string{"Idempotency-Key", "b-1"}, "validation_failed"},
		"first message without agent":  {map[string]any{"content": "hi"}, []string{"Idempotency-Key", "b-2"}, "validation_failed"},
		"options without agent":        {map[string]any{"content": "hi", "options": map[string]any{}}, []string{"Idempotency-Key", "b-3"}, "validation_failed"},
		"an intent is not for clients": {map[string]any{"content": "hi", "agentId": "chat", "intent": "steer"}, []string{"Idempotency-Key", "b-4"}, "validation_failed"},
	} {
		t.Run(name, func(t *testing.T) {
			ans := send(t, nil, st, http.MethodPost, path, token, tc.body, tc.hdr...)
			if ans.status != http.StatusUnprocessableEntity || ans.code() != tc.code {
				t.Errorf("%d %s, want 422 %s", ans.status, ans.body, tc.code)
			}
		})
	}
}

func TestSessionMessageSteersARunningRun(t *testing.T) {
	t.Parallel()
	gate := filepath.Join(t.TempDir(), "gate")
	agent := profile.Profile{ID: "steerable", Model: profile.ModelScripted, Tools: []string{"shell"}, Script: []profile.Turn{
		{Text: "Working.", ToolCalls: call1("shell", fmt.Sprintf(`{"command":"while [ ! -f %s ]; do sleep 0.02; done"}`, gate))},
		{Text: "Switched as you asked."},
	}}
	e, st, _ := agentEnv(t, agent)
	first := message(t, st, "sess-steer", "steerable", "build the site", "s-1")
	wantRouted(t, first, "follow_up")
	waitItem(t, st, first.RunID, events.ItemCommandExecution)
	steer := message(t, st, "sess-steer", "", "use the dev branch", "s-2")
	wantRouted(t, steer, "steer")
	if steer.RunID != first.RunID {
		t.Fatalf("the steer went to %s, want the running %s", steer.RunID, first.RunID)
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, st, first.RunID, "completed", 10*time.Second)
	if n := timesSaid(t, st, first.RunID, "use the dev branch"); n != 1 {
		t.Errorf("the steer is in the run's log %d times, want once", n)
	}
	e.invariants(st)
}

func TestSessionMessageAnswersAPausedQuestion(t *testing.T) {
	t.Parallel()
	e, st, reqs := agentEnv(t, askerAgent)
	first := message(t, st, "sess-ask", "asker", "paint the door", "q-1")
	waitStatus(t, st, first.RunID, "paused", 10*time.Second)
	answer := message(t, st, "sess-ask", "", "blue", "q-2")
	wantRouted(t, answer, "clarification")
	waitStatus(t, st, first.RunID, "completed", 10*time.Second)
	msgs := reqs.of("asker")[1].Messages
	if m := msgs[len(msgs)-1]; m.Content != "blue" {
		t.Errorf("the model got %+v as the answer, want \"blue\"", m)
	}
	e.invariants(st)
}

func TestSessionMessageWaitsForAPendingApproval(t *testing.T) {
	t.Parallel()
	agent := profile.Profile{ID: "careful", Model: profile.ModelScripted, Tools: []string{"shell"}, Script: []profile.Turn{
		{Text: "Let me check.", ToolCalls: call1("shell", `{"command":"echo checked"}`)},
		{Text: "Done as you said."},
	}, Policy: policy.Config{Rules: []policy.Rule{{ID: "ask-echo", Tool: "shell", Argument: "command",
		Pattern: "^echo", Action: policy.RequireApproval}}}}
	e, st, reqs := agentEnv(t, agent)
	first := message(t, st, "sess-appr", "careful", "check it", "a-1")
	waitStatus(t, st, first.RunID, "paused", 10*time.Second)
	queued := message(t, st, "sess-appr", "", "then tidy up", "a-2")
	wantRouted(t, queued, "queued")
	if queued.RunID != first.RunID || queued.Outcome != client.OutcomeAccepted {
		t.Fatalf("queued message %+v, want accepted on %s", queued, first.RunID)
	}
	if run := getRun(t, st, first.RunID); run.Status != "paused" {
		t.Fatalf("a queued message resumed the run: %s", run.Status)
	}
	approveAll(t, st, first.RunID)
	waitStatus(t, st, first.RunID, "completed", 10*time.Second)
	if n := timesSaid(t, st, first.RunID, "then tidy up"); n != 1 {
		t.Errorf("the queued message is in the run's log %d times, want once", n)
	}
	got := reqs.of("careful")
	if msgs := got[len(got)-1].Messages; msgs[len(msgs)-1].Content != "then tidy up" {
		t.Errorf("the model's last request ends with %+v, want the queued message", msgs[len(msgs)-1])
	}
	e.invariants(st)
}

// approveAll allows every approval the run waits for.
func approveAll(t *testing.T, st *stack.Stack, runID string) {
	t.Helper()
	var item string
	for _, ev := range eventsOf(t, st, runID, events.ItemAwaitingApproval) {
		item = ev.ItemID
	}
	wait := 5 * time.Second
	res, err := apiOf(t, st).DecideApproval(t.Context(), runID, client.ApprovalDecisionRequest{ItemID: item,
		Decision: "allow", Scope: "item"}, client.CommandOptions{IdempotencyKey: "allow-" + item, Wait: &wait})
	if err != nil || (res.Outcome != client.OutcomeApplied && res.Outcome != client.OutcomeAccepted) {
		t.Fatalf("approve %s: %+v %v", item, res, err)
	}
}
