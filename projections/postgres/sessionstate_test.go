package postgres_test

import (
	"context"
	"slices"
	"testing"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/events/eventstest"
	"github.com/xbot-runtime/xbot/projections/postgres"
)

// A session's state follows its runs: a paused approval is pending and the
// steer accepted before the pause is queued; once decided and applied they
// are closed and admitted, and every list names the inputs by their keys.
func TestSessionStateFollowsInteractionsAndInputs(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	off := offsets{}
	first, firstCmd := completedRun(t, "acme", "s-st")
	run := newRun(t, "acme", "s-st")
	run.At(clock + 1000)
	run.accept(events.NewID("cmd"), "msg-2")
	run.Started("exec-1")
	steer := events.NewID("cmd")
	run.CommandAccepted(steer, events.CommandAcceptedPayload{CommandType: "AppendUserInput", IdempotencyKey: "msg-3"})
	call := events.ToolCallRef{ID: "call_1", Name: "shell", Arguments: `{"command":"rm -rf build"}`}
	tool := events.NewID("itm")
	run.ToolStarted(tool, "", events.ItemCommandExecution, call)
	run.Ask(tool, call, "destructive-shell", "deletes files")
	run.Paused(events.PauseAwaitingApproval, tool)
	other, _ := completedRun(t, "globex", "s-st") // another tenant's session of the same name
	f.apply(t, off.records(t, 0, first.Events()...))
	f.apply(t, off.records(t, 1, run.Events()...))
	f.apply(t, off.records(t, 2, other.Events()...))

	st, err := f.store.GetSessionState(ctx, "acme", "s-st")
	if err != nil {
		t.Fatal(err)
	}
	if st.Head.RunID != run.RunID() || st.Head.LastSeq != run.Last().Seq || st.Open == nil || st.Open.RunID != run.RunID() ||
		st.Open.Status != "paused" || st.Open.PauseReason != "awaiting_approval" {
		t.Fatalf("head %+v, open %+v: want run %s paused at seq %d", st.Head, st.Open, run.RunID(), run.Last().Seq)
	}
	if len(st.Pending) != 1 || st.Pending[0].ItemID != tool || st.Pending[0].Kind != postgres.InteractionToolApproval ||
		st.Pending[0].Status != postgres.InteractionOpen || st.Pending[0].RuleID != "destructive-shell" ||
		st.Pending[0].ApprovalID != eventstest.ApprovalID(run.RunID(), tool) || len(st.Closed) != 0 {
		t.Fatalf("pending %+v, closed %+v", st.Pending, st.Closed)
	}
	if !slices.Equal(st.Queued, []string{"msg-3"}) || !slices.Equal(st.Admitted, []string{"key-" + firstCmd, "msg-2"}) {
		t.Fatalf("queued %v, admitted %v", st.Queued, st.Admitted)
	}

	n := len(run.Events())
	run.Decide(eventstest.Decision{CommandID: events.NewID("cmd"), ItemID: tool, Decision: events.DecisionAllow,
		Scope: events.ScopeItem, Actor: events.Actor{Type: "user", ID: "u-1"}})
	run.Steer(events.NewID("itm"), steer, "and keep the logs")
	run.CommandApplied(steer, events.CommandAppliedPayload{CommandType: "AppendUserInput", IdempotencyKey: "msg-3"})
	ask := events.NewID("itm")
	question := events.ToolCallRef{ID: "call_2", Name: "ask_user", Arguments: `{"question":"Which branch?"}`}
	run.ToolStarted(ask, "", events.ItemClarificationRequest, question)
	run.Paused(events.PauseAwaitingUserInput, ask)
	f.apply(t, off.records(t, 1, run.Events()[n:]...))

	if st, err = f.store.GetSessionState(ctx, "acme", "s-st"); err != nil {
		t.Fatal(err)
	}
	if len(st.Closed) != 1 || st.Closed[0].ItemID != tool || st.Closed[0].Status != postgres.InteractionApproved ||
		st.Closed[0].ClosedAt == nil {
		t.Fatalf("closed %+v, want the approval approved", st.Closed)
	}
	if len(st.Pending) != 1 || st.Pending[0].ItemID != ask || st.Pending[0].Kind != postgres.InteractionQuestion ||
		st.Pending[0].Input != question.Arguments {
		t.Fatalf("pending %+v, want the question", st.Pending)
	}
	if len(st.Queued) != 0 || !slices.Equal(st.Admitted, []string{"key-" + firstCmd, "msg-2", "msg-3"}) {
		t.Fatalf("queued %v, admitted %v", st.Queued, st.Admitted)
	}
	if st.Open == nil || st.Open.PauseReason != "awaiting_user_input" || st.Head.LastSeq != run.Last().Seq {
		t.Fatalf("open %+v, head %+v", st.Open, st.Head)
	}
	_, err = f.store.GetSessionState(ctx, "initech", "s-st")
	wantNotFound(t, err)
}
