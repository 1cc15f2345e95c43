package systemtest_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/services/api/client"
	"github.com/xbot-runtime/xbot/services/engine/policy"
	"github.com/xbot-runtime/xbot/services/engine/profile"
)

// The session state (GET /v1/sessions/{id}/state) end to end: what a
// client reads of a session at a point of its log, and the stream from that
// point on.

// stateAgent's first response asks for two shell calls: one waits for gate,
// the other deploys, which needs approval. The run pauses for the approval
// once the first call is done, so a steer sent while it runs is still
// waiting for the next model request when the run pauses.
func stateAgent(gate, count string) profile.Profile {
	return profile.Profile{ID: "stateful", Model: profile.ModelScripted, Tools: []string{"shell"},
		Policy: policy.Config{Rules: []policy.Rule{deployRule}}, Script: []profile.Turn{
			{Text: "Working.", ToolCalls: []profile.ScriptedCall{
				{Name: "shell", Arguments: fmt.Sprintf(`{"command":"while [ ! -f %s ]; do sleep 0.02; done"}`, gate)},
				{Name: "shell", Arguments: fmt.Sprintf(`{"command":"echo deploy >> %s"}`, count)}}},
			{Text: "Done."},
		}}
}

// sessionStateWhen reads the session's state through c until check accepts it.
func sessionStateWhen(t *testing.T, c *client.Client, session, what string, check func(client.SessionState) error) client.SessionState {
	t.Helper()
	var st client.SessionState
	eventually.Succeeds(t, 10*time.Second, what, func() error {
		var err error
		if st, err = c.SessionState(t.Context(), session); err != nil {
			return err
		}
		return check(st)
	})
	return st
}

func TestSessionStateShowsPendingInteractionsAndQueuedInputs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	gate, count := filepath.Join(dir, "gate"), filepath.Join(dir, "count")
	e, st, _ := agentEnv(t, stateAgent(gate, count))
	startStreams(t, e, st)
	alice := apiClient(t, st, aliceToken, nil)
	const session = "sess-state"
	runID := createRun(t, alice, client.CreateRunRequest{AgentID: "stateful", Input: client.UserInput{Content: "ship it"},
		PlatformSessionID: session}, "state-create").RunID
	waitItem(t, st, runID, events.ItemCommandExecution)
	steer, err := alice.AppendInput(t.Context(), runID, client.AppendInputRequest{Intent: "steer", Content: "and tell me when done"},
		client.CommandOptions{IdempotencyKey: "state-steer"})
	if err != nil || steer.Outcome != client.OutcomeAccepted {
		t.Fatalf("steer: %+v %v", steer, err)
	}
	sessionStateWhen(t, alice, session, "working with the steer queued", func(s client.SessionState) error {
		if s.Status.Status != "working" || s.OpenReply == nil || s.OpenReply.Status != "running" ||
			!slices.Equal(s.QueuedInputIDs, []string{"state-steer"}) || !slices.Equal(s.AdmittedInputIDs, []string{"state-create"}) {
			return fmt.Errorf("state %+v", s)
		}
		return nil
	})
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, st, runID, "paused", 10*time.Second)
	paused := sessionStateWhen(t, alice, session, "the approval pending, the steer queued", func(s client.SessionState) error {
		if s.Status.Status != "waiting" || s.Status.Reason != string(events.PauseAwaitingApproval) || len(s.PendingInteractions) != 1 ||
			!slices.Equal(s.QueuedInputIDs, []string{"state-steer"}) || s.OpenReply == nil || s.OpenReply.Status != "paused" {
			return fmt.Errorf("state %+v", s)
		}
		return nil
	})
	ask := paused.PendingInteractions[0]
	if ask.Kind != "tool_approval" || ask.Status != "open" || ask.RuleID != deployRule.ID || ask.RunID != runID ||
		ask.InteractionID != ask.ItemID || len(paused.ClosedInteractions) != 0 {
		t.Fatalf("interactions %+v / %+v", paused.PendingInteractions, paused.ClosedInteractions)
	}
	for _, c := range []struct {
		tok  string
		want error
	}{{bobToken, client.ErrForbiddenScope}, {otherToken, client.ErrNotFound}, {token, nil}, {readerToken, nil}} {
		if _, err := apiClient(t, st, c.tok, nil).SessionState(t.Context(), session); !errors.Is(err, c.want) {
			t.Errorf("state read with %s: %v, want %v", c.tok, err, c.want)
		}
	}

	// Resume the session stream at the paused state's cursor, then decide.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp := openStream(ctx, t, st, "/v1/sessions/"+session+"/stream", aliceToken, "Last-Event-ID", paused.Cursor)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("session stream at %s: HTTP %d", paused.Cursor, resp.StatusCode)
	}
	if res, err := alice.DecideApproval(t.Context(), runID, client.ApprovalDecisionRequest{ItemID: ask.ItemID,
		Decision: events.DecisionAllow, Scope: events.ScopeItem}, client.CommandOptions{IdempotencyKey: "state-decide"}); err != nil ||
		res.Outcome != client.OutcomeApplied {
		t.Fatalf("decision: %+v %v", res, err)
	}
	waitStatus(t, st, runID, "completed", 10*time.Second)
	done := sessionStateWhen(t, alice, session, "idle, the approval closed, the steer admitted", func(s client.SessionState) error {
		if s.Status.Status != "idle" || s.OpenReply != nil || len(s.PendingInteractions) != 0 || len(s.ClosedInteractions) != 1 ||
			len(s.QueuedInputIDs) != 0 || !slices.Equal(s.AdmittedInputIDs, []string{"state-create", "state-steer"}) {
			return fmt.Errorf("state %+v", s)
		}
		return nil
	})
	if c := done.ClosedInteractions[0]; c.ItemID != ask.ItemID || c.Status != "approved" || c.Scope != events.ScopeItem || c.ClosedAt == nil {
		t.Fatalf("closed interaction %+v", c)
	}

	// The stream from the cursor is the whole stream's rest: no gap, no repeat.
	got := readUntil(t, resp.Body, `"status":"idle"`)
	whole := strings.ReplaceAll("\n"+readRunStream(t, st, runID, ""), "\nid: ", "\nid: "+runID+":")[1:]
	whole = strings.TrimSuffix(whole, "data: [DONE]\n\n")
	seen, rest := splitAtCursor(t, whole, paused.Cursor)
	if got != rest {
		t.Fatalf("stream after the cursor %s:\n%s\nwant the rest of the whole stream:\n%s", paused.Cursor, got, rest)
	}
	if !strings.Contains(seen, `"type":"tool-approval-request","toolCallId":"`+ask.ItemID+`"`) ||
		!strings.HasSuffix(lastStatus(seen), `"status":"waiting","runId":"`+runID+`","reason":"awaiting_approval"}`) {
		t.Fatalf("the stream up to the cursor does not show the paused state:\n%s", seen)
	}
	e.invariants(st)
}

// splitAtCursor splits a session stream's frames into those up to the
// chunk id cursor (<runId>:<seq>) and those after it.
func splitAtCursor(t *testing.T, stream, cursor string) (upTo, after string) {
	t.Helper()
	run, seqText, _ := strings.Cut(cursor, ":")
	seq, err := strconv.ParseInt(seqText, 10, 64)
	if err != nil {
		t.Fatalf("cursor %q: %v", cursor, err)
	}
	frames := strings.SplitAfter(stream, "\n\n")
	for i, f := range frames {
		id, _, _ := strings.Cut(strings.TrimPrefix(f, "id: "+run+":"), "\n")
		n, _ := strconv.ParseInt(strings.SplitN(id, ".", 2)[0], 10, 64)
		if n > seq {
			return strings.Join(frames[:i], ""), strings.Join(frames[i:], "")
		}
	}
	return stream, ""
}

// lastStatus is the data line of the last data-status chunk of stream.
func lastStatus(stream string) string {
	var last string
	for _, l := range strings.Split(stream, "\n") {
		if strings.Contains(l, `"type":"data-status"`) {
			last = strings.TrimSuffix(l, `,"transient":true}`)
		}
	}
	return last
}

// A session whose first run this instance created (even with ?wait=0) has a
// state at once: the read waits for the read model, like a read of the run.
func TestSessionStateRightAfterAnUnwaitedCreate(t *testing.T) {
	t.Parallel()
	e, st, _ := agentEnv(t, echoAgent())
	startStreams(t, e, st)
	c := apiOf(t, st)
	for i := range 10 {
		session := fmt.Sprintf("sess-state-now-%d", i)
		res, err := c.CreateRun(t.Context(), client.CreateRunRequest{AgentID: "chat", Input: client.UserInput{Content: "hi"},
			PlatformSessionID: session}, client.CommandOptions{IdempotencyKey: "state-now-" + strconv.Itoa(i), Wait: client.WaitFor(0)})
		if err != nil {
			t.Fatal(err)
		}
		s, err := c.SessionState(t.Context(), session)
		if err != nil || s.Status.RunID != res.RunID || !strings.HasPrefix(s.Cursor, res.RunID+":") {
			t.Fatalf("try %d: state of %s right after its first create: %+v %v", i, session, s, err)
		}
	}
}

// A question the run waits on is a pending interaction with its text; the
// answer closes it and is an admitted input.
func TestSessionStateShowsAQuestionUntilAnswered(t *testing.T) {
	t.Parallel()
	e, st, _ := agentEnv(t, askerAgent)
	c := apiOf(t, st)
	const session = "sess-state-ask"
	runID := createRun(t, c, client.CreateRunRequest{AgentID: "asker", Input: client.UserInput{Content: "paint the door"},
		PlatformSessionID: session}, "state-ask").RunID
	waitStatus(t, st, runID, "paused", 10*time.Second)
	asked := sessionStateWhen(t, c, session, "the question pending", func(s client.SessionState) error {
		if len(s.PendingInteractions) != 1 || s.Status.Reason != string(events.PauseAwaitingUserInput) {
			return fmt.Errorf("state %+v", s)
		}
		return nil
	})
	q := asked.PendingInteractions[0]
	if q.Kind != "question" || q.Status != "open" || q.Question != "Which colour?" || q.ToolName != "ask_user" {
		t.Fatalf("question %+v", q)
	}
	if res := input(t, st, runID, "clarification", "blue", "state-ask-answer"); res.Outcome != client.OutcomeAccepted {
		t.Fatalf("clarification: %+v", res)
	}
	waitStatus(t, st, runID, "completed", 10*time.Second)
	sessionStateWhen(t, c, session, "the question answered", func(s client.SessionState) error {
		if len(s.PendingInteractions) != 0 || len(s.ClosedInteractions) != 1 || s.ClosedInteractions[0].ItemID != q.ItemID ||
			s.ClosedInteractions[0].Status != "answered" || !slices.Equal(s.AdmittedInputIDs, []string{"state-ask", "state-ask-answer"}) ||
			s.Status.Status != "idle" {
			return fmt.Errorf("state %+v", s)
		}
		return nil
	})
	e.invariants(st)
}
