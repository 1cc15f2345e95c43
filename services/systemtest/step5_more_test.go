package systemtest_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/api/client"
	"github.com/xbot-runtime/xbot/services/api/client/agentruntime"
	"github.com/xbot-runtime/xbot/services/stack"
)

// capApproveAfterReconnect: the reader that saw the approval asked goes
// away; a new reader takes the conversation over from the state's cursor,
// answers allow, and sees the call run and the reply complete.
func capApproveAfterReconnect(t *testing.T, st *stack.Stack, _ string) {
	session := "sess-cap-approve-" + strings.ReplaceAll(t.Name(), "/", "-")
	first := newConv(t, runtimeClient(t, st, session, "conformance-approval"), nil)
	first.submit(session+"-1", "go")
	open := first.until("the approval", isEvent[agentruntime.InteractionOpened]).(agentruntime.InteractionOpened)
	first.stop()
	_ = first.rc.Close()
	rc := runtimeClient(t, st, session, "conformance-approval")
	var state agentruntime.State
	eventuallyState(t, rc, &state, func(s agentruntime.State) bool { return len(s.PendingInteractions) == 1 })
	if state.PendingInteractions[0].InteractionID != open.InteractionID || state.Status != agentruntime.StatusWaiting {
		t.Fatalf("the state after the reconnect: %+v", state)
	}
	next := newConv(t, rc, &state.Cursor)
	if err := rc.Answer(t.Context(), open.InteractionID, agentruntime.Response{Decision: "allow"}); err != nil {
		t.Fatal(err)
	}
	end := next.idle()
	outs := toolOutputs(next.got)
	if end.Outcome != agentruntime.OutcomeCompleted || closedAs(next.got, open.InteractionID) != agentruntime.ClosedAnswered ||
		len(outs) != 1 || !strings.Contains(outs[0], "conformance") {
		t.Fatalf("after the answer: ended %s, closed %q, outputs %q", end.Outcome, closedAs(next.got, open.InteractionID), outs)
	}
	// The approval is on record as the new reader's allow.
	aps, err := apiOf(t, st).AllApprovals(t.Context(), client.ApprovalQuery{RunID: open.ResponseID})
	if err != nil || len(aps) != 1 || aps[0].Decision != "allow" {
		t.Fatalf("approvals of the run: %+v %v", aps, err)
	}
}

// eventuallyState reads rc's state into st until ready holds (the state
// lags the log by a projector batch).
func eventuallyState(t *testing.T, rc *agentruntime.Client, st *agentruntime.State, ready func(agentruntime.State) bool) {
	t.Helper()
	eventuallySucceeds(t, "the state", func() error {
		s, err := rc.State(t.Context())
		if err != nil {
			return err
		}
		if *st = s; !ready(s) {
			return fmt.Errorf("state %+v", s)
		}
		return nil
	})
}

func capDeny(t *testing.T, st *stack.Stack, _ string) {
	c := newConv(t, runtimeClient(t, st, "sess-cap-deny", "conformance-approval"), nil)
	c.submit("cap-deny-1", "go")
	open := c.until("the approval", isEvent[agentruntime.InteractionOpened]).(agentruntime.InteractionOpened)
	if err := c.rc.Answer(t.Context(), open.InteractionID, agentruntime.Response{Decision: "deny", Reason: "not now"}); err != nil {
		t.Fatal(err)
	}
	end := c.idle()
	if end.Outcome != agentruntime.OutcomeCompleted || closedAs(c.got, open.InteractionID) != agentruntime.ClosedAnswered ||
		!slices.ContainsFunc(c.got, isFrame("tool-output-denied")) || len(toolOutputs(c.got)) != 0 {
		t.Fatalf("a denied call: ended %s, closed %q, outputs %q", end.Outcome, closedAs(c.got, open.InteractionID), toolOutputs(c.got))
	}
	replayed(t, st, c, "conformance-approval")
}

// capCancel cancels the reply's run with the run-level cancel.
func capCancel(t *testing.T, st *stack.Stack, _ string) {
	c := newConv(t, runtimeClient(t, st, "sess-cap-cancel", "conformance-slow"), nil)
	c.submit("cap-cancel-1", "start")
	started := c.until("the reply", isEvent[agentruntime.ResponseStarted]).(agentruntime.ResponseStarted)
	c.until("the reply streaming", isFrame("text-delta"))
	cancelRun(t, st, started.ResponseID, "cancelled by the test", "cap-cancel")
	if end := c.idle(); end.Outcome != agentruntime.OutcomeCancelled {
		t.Fatalf("the cancelled reply ended %s", end.Outcome)
	}
	replayed(t, st, c, "conformance-slow")
}

// capInterrupt interrupts a working reply, then one paused for an approval
// with an input queued behind it, which becomes the next reply.
func capInterrupt(t *testing.T, st *stack.Stack, _ string) {
	c := newConv(t, runtimeClient(t, st, "sess-cap-interrupt", "conformance-slow"), nil)
	c.submit("cap-int-1", "start")
	c.until("the reply streaming", isFrame("text-delta"))
	if err := c.rc.Interrupt(t.Context(), false); err != nil {
		t.Fatal(err)
	}
	if end := c.idle(); end.Outcome != agentruntime.OutcomeCancelled || end.NativeReason != string(events.StatusCancelled) {
		t.Fatalf("the interrupted reply ended %+v", end)
	}
	a := newConv(t, runtimeClient(t, st, "sess-cap-interrupt-queued", "conformance-approval"), nil)
	a.submit("cap-int-2", "go")
	open := a.until("the approval", isEvent[agentruntime.InteractionOpened]).(agentruntime.InteractionOpened)
	a.submit("cap-int-3", "then this")
	if err := a.rc.Interrupt(t.Context(), false); err != nil {
		t.Fatal(err)
	}
	a.until("the queued input's reply", startedFor("cap-int-3"))
	if closedAs(a.got, open.InteractionID) != agentruntime.ClosedWithdrawn || fmt.Sprint(endsOf(a.got)) != "[cancelled]" {
		t.Fatalf("the interrupted pause: closed %q, replies ended %v", closedAs(a.got, open.InteractionID), endsOf(a.got))
	}
	if err := a.rc.Interrupt(t.Context(), true); err != nil {
		t.Fatal(err)
	}
	a.idle()
	replayed(t, st, a, "conformance-approval")
}

// capCompact asks for a compaction of a reply paused on a question: after
// the answer the reply shows the compaction and completes.
func capCompact(t *testing.T, st *stack.Stack, _ string) {
	c := newConv(t, runtimeClient(t, st, "sess-cap-compact", "conformance-question"), nil)
	c.submit("cap-compact-1", "ask me")
	open := c.until("the question", isEvent[agentruntime.InteractionOpened]).(agentruntime.InteractionOpened)
	res, err := apiOf(t, st).CompactRun(t.Context(), open.ResponseID, "the test asks", client.CommandOptions{})
	if err != nil || res.Outcome != client.OutcomeAccepted {
		t.Fatalf("compact: %+v %v", res, err)
	}
	if err := c.rc.Answer(t.Context(), open.InteractionID, agentruntime.Response{Text: "blue"}); err != nil {
		t.Fatal(err)
	}
	if end := c.idle(); end.Outcome != agentruntime.OutcomeCompleted || !slices.ContainsFunc(c.got, isFrame("data-compaction")) {
		t.Fatalf("the compacted reply ended %s; compaction part shown: %v", end.Outcome, slices.ContainsFunc(c.got, isFrame("data-compaction")))
	}
	replayed(t, st, c, "conformance-question")
}

// capAutoApproval runs the approval agent with approval mode auto: the
// command stays in the workspace, so it runs without asking.
func capAutoApproval(t *testing.T, st *stack.Stack, _ string) {
	rc, err := agentruntime.New(agentruntime.Config{API: apiOf(t, st), SessionID: "sess-cap-auto", AgentID: "conformance-approval",
		Options: &events.RunOptions{ApprovalMode: events.ApprovalAuto}})
	if err != nil {
		t.Fatal(err)
	}
	c := newConv(t, rc, nil)
	c.submit("cap-auto-1", "go")
	end := c.idle()
	outs := toolOutputs(c.got)
	if end.Outcome != agentruntime.OutcomeCompleted || slices.ContainsFunc(c.got, isEvent[agentruntime.InteractionOpened]) ||
		len(outs) != 1 || !strings.Contains(outs[0], "conformance") {
		t.Fatalf("approval mode auto: ended %s, outputs %q, events %d", end.Outcome, outs, len(c.got))
	}
}
