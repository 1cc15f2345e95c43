package postgres_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/projections/postgres"
)

func TestApplyBatchProjectsACompletedRun(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	l, cmd := completedRun(t, "acme", "sess-1")
	recs := offsets{}.records(t, 3, l.Events()...)
	f.apply(t, recs)
	checkCompletedRun(t, f, l)
	checkEventsVerbatim(t, f, l, recs)
	c, err := f.store.GetCommand(context.Background(), "acme", cmd)
	if err != nil {
		t.Fatal(err)
	}
	want := postgres.Command{CommandID: cmd, RunID: l.RunID(), TenantID: "acme", Type: "CreateRun",
		IdempotencyKey: "key-" + cmd, Outcome: "accepted", FirstOutcome: "accepted", Seq: 1,
		UpdatedAt: time.UnixMilli(l.Events()[0].OccurredAt).UTC()}
	if c != want {
		t.Fatalf("command =\n%+v, want\n%+v", c, want)
	}
}

func checkCompletedRun(tb testing.TB, f *fixture, l *runLog) {
	tb.Helper()
	run, err := f.store.GetRun(context.Background(), "acme", l.RunID())
	if err != nil {
		tb.Fatal(err)
	}
	first, last := l.Events()[0], l.Last()
	if run.Status != "completed" || run.LastSeq != last.Seq || run.TenantID != "acme" ||
		run.PlatformSessionID != "sess-1" || run.AgentID != "assistant" || run.PauseReason != "" {
		tb.Fatalf("run = %+v", run)
	}
	if !run.CreatedAt.Equal(time.UnixMilli(first.OccurredAt)) || !run.UpdatedAt.Equal(time.UnixMilli(last.OccurredAt)) {
		tb.Fatalf("created %v updated %v, want the occurredAt of the first and last event", run.CreatedAt, run.UpdatedAt)
	}
	assertJSON(tb, run.Input, `{"content":"write a haiku"}`)
	assertJSON(tb, run.SandboxKey, `{"tenantId":"acme","workspaceId":"ws-1","agentId":"assistant","ownerId":"u-1"}`)
	assertJSON(tb, run.Metadata, `{"channel":"web"}`)
}

func checkEventsVerbatim(tb testing.TB, f *fixture, l *runLog, recs []postgres.Record) {
	tb.Helper()
	evs, err := f.store.ListEvents(context.Background(), "acme", l.RunID(), 0, 0, 0)
	if err != nil {
		tb.Fatal(err)
	}
	if len(evs) != len(recs) {
		tb.Fatalf("got %d events, want %d", len(evs), len(recs))
	}
	written := l.Events()
	for i, e := range evs {
		if w := written[i]; e.Seq != int64(i+1) || e.Type != string(w.Type) || e.EventID != w.EventID ||
			e.ItemID != w.ItemID || e.OccurredAt != w.OccurredAt {
			tb.Fatalf("event %d = %+v, want %+v", i, e, w)
		}
		if !bytes.Equal(e.Envelope, recs[i].Value) {
			tb.Fatalf("event %d envelope changed:\n got %s\nwant %s", i, e.Envelope, recs[i].Value)
		}
	}
}

func TestListEventsPagesBySeq(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	l, _ := completedRun(t, "acme", "")
	f.apply(t, offsets{}.records(t, 0, l.Events()...))
	var seqs []int64
	for after := int64(0); ; {
		page, err := f.store.ListEvents(context.Background(), "acme", l.RunID(), after, 2, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		for _, e := range page {
			seqs = append(seqs, e.Seq)
		}
		after = page[len(page)-1].Seq
	}
	if len(seqs) != len(l.Events()) || seqs[0] != 1 || seqs[len(seqs)-1] != int64(len(l.Events())) {
		t.Fatalf("seqs = %v", seqs)
	}
}

// TestListEventsCapsPageBytes: a page ends before the event that would pass
// the byte cap, its first event comes even when larger than the cap, and
// paging on reads every event once.
func TestListEventsCapsPageBytes(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	l := newRun(t, "acme", "")
	l.accept(events.NewID("cmd"), "key-pages")
	l.Started("exec-1")
	l.assistantMessage(40) // deltas of about 400 bytes each
	f.apply(t, offsets{}.records(t, 0, l.Events()...))
	const maxBytes = 1000
	var seqs []int64
	pages := 0
	for after := int64(0); ; pages++ {
		page, err := f.store.ListEvents(context.Background(), "acme", l.RunID(), after, 1000, maxBytes)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		size := 0
		for _, e := range page {
			size += len(e.Envelope)
			seqs = append(seqs, e.Seq)
		}
		if size > maxBytes && len(page) > 1 {
			t.Fatalf("page after %d: %d events, %d bytes, over the %d cap", after, len(page), size, maxBytes)
		}
		after = page[len(page)-1].Seq
	}
	if len(seqs) != len(l.Events()) || seqs[0] != 1 || seqs[len(seqs)-1] != int64(len(l.Events())) || pages < 10 {
		t.Fatalf("read seqs %v in %d pages, want 1..%d in at least 10", seqs, pages, len(l.Events()))
	}
	// One event larger than the cap is returned alone.
	page, err := f.store.ListEvents(context.Background(), "acme", l.RunID(), 0, 1000, 10)
	if err != nil || len(page) != 1 || page[0].Seq != 1 {
		t.Fatalf("page with a 10-byte cap: %d events, err %v; want the first event alone", len(page), err)
	}
}

// TestRunStatusFollowsLifecycle applies one event per batch and checks the
// runs row after each.
func TestRunStatusFollowsLifecycle(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	l := newRun(t, "acme", "sess-1")
	item := events.NewID("itm")
	tool := events.ItemToolCall
	steps := []struct {
		draft                  events.Draft
		status, pause, errCode string
	}{
		{acceptDraft(l), "queued", "", ""},
		{events.Draft{Type: events.RunStarted}, "running", "", ""},
		{onItem(events.ItemStarted, item, events.ItemStartedPayload{ItemType: tool}), "running", "", ""},
		{onItem(events.ItemAwaitingApproval, item, events.ItemAwaitingApprovalPayload{ItemType: tool}), "running", "", ""},
		{events.Draft{Type: events.RunPaused, Payload: events.RunPausedPayload{PauseReason: events.PauseAwaitingApproval}},
			"paused", "awaiting_approval", ""},
		{onItem(events.ApprovalDecisionSubmitted, item, events.ApprovalDecisionPayload{Decision: "allow", Scope: "item"}),
			"paused", "awaiting_approval", ""},
		{events.Draft{Type: events.RunResumed}, "running", "", ""},
		{onItem(events.ItemCompleted, item, events.ItemCompletedPayload{ItemType: tool}), "running", "", ""},
		{events.Draft{Type: events.RunFailed, Payload: events.RunFailedPayload{ErrorCode: events.FailModelError}},
			"failed", "", "model_error"},
	}
	off := offsets{}
	for i, st := range steps {
		e := l.Add(st.draft).Last()
		f.apply(t, off.records(t, 0, e))
		run, err := f.store.GetRun(context.Background(), "acme", l.RunID())
		if err != nil {
			t.Fatal(err)
		}
		if run.Status != st.status || run.PauseReason != st.pause || run.ErrorCode != st.errCode ||
			run.LastSeq != e.Seq || !run.UpdatedAt.Equal(time.UnixMilli(e.OccurredAt)) {
			t.Fatalf("step %d (%s): run = %+v", i, e.Type, run)
		}
	}
}

func onItem(t events.Type, item string, payload any) events.Draft {
	return events.Draft{Type: t, ItemID: item, Payload: payload}
}

func acceptDraft(l *runLog) events.Draft {
	return events.Draft{Type: events.RunAccepted, CommandID: events.NewID("cmd"), Payload: events.RunAcceptedPayload{
		AgentID: "assistant", Input: events.UserInput{Content: "hello"}, IdempotencyKey: "k-" + l.RunID(),
		SandboxKey: events.SandboxKey{TenantID: l.Identity().TenantID, WorkspaceID: "ws", AgentID: "assistant", OwnerID: "o"}}}
}

func TestCancelFlowRecordsEveryOutcome(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	l := newRun(t, "acme", "sess-1")
	l.accept(events.NewID("cmd"), "create-1")
	l.Started("")
	cancel := events.NewID("cmd")
	l.CommandAccepted(cancel, events.CommandAcceptedPayload{CommandType: "CancelRun",
		IdempotencyKey: "cancel-1", Command: json.RawMessage(`{"reason":"user asked"}`)})
	off := offsets{}
	f.apply(t, off.records(t, 1, l.Events()...))
	if c := f.command(t, "acme", cancel); c.Outcome != "accepted" || c.FirstOutcome != "accepted" ||
		c.Type != "CancelRun" || c.IdempotencyKey != "cancel-1" {
		t.Fatalf("after accept: %+v", c)
	}

	mark := len(l.Events())
	l.Cancelled("", "user asked")
	applied := l.CommandApplied(cancel,
		events.CommandAppliedPayload{CommandType: "CancelRun", IdempotencyKey: "cancel-1"}).Last()
	f.apply(t, off.records(t, 1, l.Events()[mark:]...))
	if c := f.command(t, "acme", cancel); c.Outcome != "applied" || c.FirstOutcome != "accepted" ||
		c.Seq != applied.Seq || c.Code != "" {
		t.Fatalf("after apply: %+v", c)
	}
	run, err := f.store.GetRun(ctx, "acme", l.RunID())
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != "cancelled" || run.CancelReason != "user asked" || run.LastSeq != applied.Seq {
		t.Fatalf("run = %+v", run)
	}

	// A cancel of the terminal run has no effect.
	late := events.NewID("cmd")
	l.CommandNoEffect(late, events.CommandNoEffectPayload{CommandType: "CancelRun",
		IdempotencyKey: "cancel-2", Reason: "run is already cancelled"})
	f.apply(t, off.records(t, 1, l.Last()))
	if c := f.command(t, "acme", late); c.Outcome != "no_effect" || c.FirstOutcome != "no_effect" ||
		c.Message != "run is already cancelled" {
		t.Fatalf("late cancel: %+v", c)
	}
}

// A run's log may start with refused commands before (or without) being
// accepted: no runs row exists until runtime.run.accepted, but continuity
// is tracked from seq 1.
func TestRejectedCommandForNonexistentRun(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	l := newRun(t, "acme", "")
	cancel := events.NewID("cmd")
	l.CommandRejected(cancel, events.CommandRejectedPayload{CommandType: "CancelRun",
		IdempotencyKey: "c-1", Code: "run_not_found", Message: "run does not exist"})
	off := offsets{}
	f.apply(t, off.records(t, 0, l.Events()...))

	_, err := f.store.GetRun(ctx, "acme", l.RunID())
	wantNotFound(t, err)
	if c := f.command(t, "acme", cancel); c.Outcome != "rejected" || c.FirstOutcome != "rejected" ||
		c.Code != "run_not_found" ||
		c.Message != "run does not exist" || c.RunID != l.RunID() || c.Seq != 1 {
		t.Fatalf("command = %+v", c)
	}
	if evs, err := f.store.ListEvents(ctx, "acme", l.RunID(), 0, 0, 0); err != nil || len(evs) != 1 {
		t.Fatalf("events = %v, %v", evs, err)
	}

	// Seq 3 would skip seq 2, even though the run has no runs row.
	skip := l.accept(events.NewID("cmd"), "create-1")
	skip.Seq = 3
	var gap *events.SeqGapError
	if err := f.store.ApplyBatch(ctx, projector, topic, off.records(t, 0, skip)); !errors.As(err, &gap) ||
		*gap != (events.SeqGapError{RunID: l.RunID(), Expected: 2, Actual: 3}) {
		t.Fatalf("error = %v, want a gap at 2", err)
	}
	f.apply(t, off.records(t, 0, l.Events()[1]))
	run, err := f.store.GetRun(ctx, "acme", l.RunID())
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != "queued" || run.LastSeq != 2 || !run.CreatedAt.Equal(time.UnixMilli(l.Events()[1].OccurredAt)) {
		t.Fatalf("run = %+v", run)
	}
}

func TestDuplicateCommands(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	l := newRun(t, "acme", "")
	create := events.NewID("cmd")
	l.accept(create, "create-1")
	// The same command delivered twice: its original outcome stands.
	l.CommandDuplicate(create, events.CommandDuplicatePayload{CommandType: "CreateRun",
		IdempotencyKey: "create-1", OriginalCommandID: create, OriginalOutcome: "accepted"})
	// Another command reusing the key is a duplicate of the first.
	retry := events.NewID("cmd")
	l.CommandDuplicate(retry, events.CommandDuplicatePayload{CommandType: "CreateRun",
		IdempotencyKey: "create-1", OriginalCommandID: create, OriginalOutcome: "accepted"})
	f.apply(t, offsets{}.records(t, 0, l.Events()...))

	c, err := f.store.GetCommand(ctx, "acme", create)
	if err != nil {
		t.Fatal(err)
	}
	if c.Outcome != "accepted" || c.FirstOutcome != "accepted" || c.Seq != 1 || c.Code != "" {
		t.Fatalf("original = %+v", c)
	}
	d, err := f.store.GetCommand(ctx, "acme", retry)
	if err != nil {
		t.Fatal(err)
	}
	if d.Outcome != "duplicate" || d.FirstOutcome != "duplicate" || d.Code != "duplicate_command" ||
		d.OriginalCommandID != create || d.OriginalOutcome != "accepted" || d.Type != "CreateRun" || d.Seq != 3 {
		t.Fatalf("duplicate = %+v", d)
	}
}

func assertJSON(tb testing.TB, got json.RawMessage, want string) {
	tb.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		tb.Fatalf("%s: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		tb.Fatal(err)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	if !bytes.Equal(gb, wb) {
		tb.Fatalf("json = %s, want %s", got, want)
	}
}
