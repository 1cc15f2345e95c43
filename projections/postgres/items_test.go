package postgres_test

import (
	"context"
	"encoding/json"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/events/eventstest"
	"github.com/xbot-runtime/xbot/projections/postgres"
)

// richRun is a run with an item of every kind and every way to close one:
// completed, truncated, failed, approved and left open.
type richRun struct {
	*runLog
	steer, reasoning, assistant, shell, file, bad, approved, big, ask string
}

func newRichRun(tb testing.TB, tenant, session string) *richRun {
	r := &richRun{runLog: started(tb, tenant, session)}
	r.steer = events.NewID("itm")
	r.Steer(r.steer, "cmd_x", "use main")
	r.reasoning = events.NewID("itm")
	r.ItemStarted(r.reasoning, events.ItemReasoning, nil).Deltas(r.reasoning, "hmm").
		ItemCompleted(r.reasoning, events.ItemReasoning, events.ItemStatusTruncated, "hmm", nil)
	r.assistant = events.NewID("itm")
	r.ItemStarted(r.assistant, events.ItemAssistantMessage, nil).ItemCompleted(r.assistant, events.ItemAssistantMessage,
		events.ItemStatusCompleted, "Let me look.", events.AssistantData{Turn: 0, ToolCalls: []events.ToolCallRef{{ID: "c1", Name: "shell", Arguments: "{}"}}})
	r.shell = r.startTool(events.ItemCommandExecution, "shell", `{"command":"echo hi; exit 3"}`)
	r.Deltas(r.shell, "hi\n")
	r.completeTool(r.shell, events.ItemCommandExecution, "shell", "exit code 3\nhi\n",
		&events.ExecData{Command: "echo hi; exit 3", ExitCode: 3, Stdout: "hi\n", DurationMs: 4})
	r.file = r.startTool(events.ItemFileChange, "write_file", `{"path":"a.md","content":"x"}`)
	r.completeTool(r.file, events.ItemFileChange, "write_file", "wrote a.md", nil)
	r.bad = r.startTool(events.ItemToolCall, "teleport", `{}`)
	r.ItemFailed(r.bad, events.ItemToolCall, events.ToolErrUnknownTool, `unknown tool "teleport"`)
	r.approved = r.startTool(events.ItemCommandExecution, "shell", `{"command":"rm -rf build"}`)
	r.awaitApproval(r.approved, "shell", `{"command":"rm -rf build"}`)
	r.decide(r.approved, events.NewID("cmd"), "allow", "run")
	r.completeTool(r.approved, events.ItemCommandExecution, "shell", "exit code 0\n", &events.ExecData{ExitCode: 0})
	r.big = r.startTool(events.ItemToolCall, "read_file", `{"path":"`+strings.Repeat("p", 40<<10)+`"}`)
	r.completeTool(r.big, events.ItemToolCall, "read_file", strings.Repeat("é", 20<<10), nil)
	r.ask = r.startTool(events.ItemClarificationRequest, "ask_user", `{"question":"Which colour?"}`)
	r.Paused(events.PauseAwaitingUserInput, r.ask)
	return r
}

func TestItemsProjectEveryKind(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	r := newRichRun(t, "acme", "s-1")
	f.apply(t, offsets{}.records(t, 0, r.Events()...))
	items := listItems(t, f, postgres.ItemFilter{TenantID: "acme", RunID: r.RunID(), Limit: 200})
	if len(items) != 9 {
		t.Fatalf("%d items, want 9", len(items))
	}
	byID := map[string]postgres.Item{}
	for _, it := range items {
		byID[it.ItemID] = it
	}
	check := func(id, typ, status, tool, output, errCode string, exit *int) postgres.Item {
		t.Helper()
		it := byID[id]
		start, last := r.First(events.ItemStarted, id), lastEventOf(r.runLog, id)
		if it.Type != typ || it.Status != status || it.ToolName != tool || it.ErrorCode != errCode ||
			it.StartedSeq != start.Seq || it.UpdatedSeq != last.Seq || it.TenantID != "acme" ||
			!it.StartedAt.Equal(time.UnixMilli(start.OccurredAt)) || !sameInt(it.ExitCode, exit) {
			t.Fatalf("item %s = %+v", typ, it)
		}
		if output != "-" && (it.Output == nil || *it.Output != output) {
			t.Fatalf("item %s output = %v, want %q", typ, it.Output, output)
		}
		closed := status != "started" && status != "awaiting_approval"
		if closed && (it.CompletedAt == nil || !it.CompletedAt.Equal(time.UnixMilli(last.OccurredAt)) ||
			it.DurationMs == nil || *it.DurationMs != last.OccurredAt-start.OccurredAt) {
			t.Fatalf("item %s times = %v %v", typ, it.CompletedAt, it.DurationMs)
		}
		if !closed && (it.CompletedAt != nil || it.DurationMs != nil || it.Output != nil) {
			t.Fatalf("open item %s = %+v", typ, it)
		}
		return it
	}
	check(r.steer, "user_message", "completed", "", "use main", "", nil)
	check(r.reasoning, "reasoning", "truncated", "", "hmm", "", nil)
	check(r.assistant, "assistant_message", "completed", "", "Let me look.", "", nil)
	shell := check(r.shell, "command_execution", "completed", "shell", "exit code 3\nhi\n", "", ptr(3))
	if shell.Input != `{"command":"echo hi; exit 3"}` || shell.ToolCallID == "" || shell.InputTruncated {
		t.Fatalf("shell input %+v", shell)
	}
	check(r.file, "file_change", "completed", "write_file", "wrote a.md", "", nil)
	bad := check(r.bad, "tool_call", "failed", "teleport", "-", "unknown_tool", nil)
	if bad.ErrorMessage != `unknown tool "teleport"` || bad.Output != nil {
		t.Fatalf("failed item %+v", bad)
	}
	check(r.approved, "command_execution", "completed", "shell", "exit code 0\n", "", ptr(0))
	big := check(r.big, "tool_call", "completed", "read_file", "-", "", nil)
	if !big.InputTruncated || len(big.Input) != 32<<10 || !big.OutputTruncated || len(*big.Output) != 32<<10 ||
		*big.Output != strings.Repeat("é", 16<<10) {
		t.Fatalf("big item: input %d bytes (cut %v), output %d bytes (cut %v)", len(big.Input), big.InputTruncated,
			len(*big.Output), big.OutputTruncated)
	}
	check(r.ask, "clarification_request", "started", "ask_user", "-", "", nil)
}

func lastEventOf(l *runLog, item string) events.Envelope {
	var last events.Envelope
	for _, e := range l.Events() {
		if e.ItemID == item && e.Type != events.ItemDelta && e.Type != events.PermissionGrantApplied {
			last = e
		}
	}
	return last
}

func sameInt(a, b *int) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
}

func ptr[T any](v T) *T { return &v }

// TestItemStatusFollowsEachEvent applies one event per batch, so every
// change reaches a stored row, and checks the item's status after each.
func TestItemStatusFollowsEachEvent(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	l := started(t, "acme", "")
	off := offsets{}
	f.apply(t, off.records(t, 0, l.Events()...))
	item := l.startTool(events.ItemCommandExecution, "shell", `{"command":"make"}`)
	// started, awaiting, paused, decided, granted, applied, resumed, completed
	want := []string{"started", "awaiting_approval", "awaiting_approval", "started", "started", "started", "started", "completed"}
	l.awaitApproval(item, "shell", `{"command":"make"}`)
	l.decide(item, events.NewID("cmd"), "allow", "platform_session")
	l.completeTool(item, events.ItemCommandExecution, "shell", "ok", &events.ExecData{ExitCode: 2})
	for i, e := range l.Events()[2:] {
		f.apply(t, off.records(t, 0, e))
		items, _, err := f.store.ListItems(context.Background(), postgres.ItemFilter{TenantID: "acme", RunID: l.RunID()})
		if err != nil || len(items) != 1 {
			t.Fatalf("after %s: %v, %v", e.Type, items, err)
		}
		if it := items[0]; it.Status != want[i] || it.UpdatedSeq != lastChange(l.Events()[:i+3], item).Seq {
			t.Fatalf("after %s: item %+v, want status %s", e.Type, it, want[i])
		}
	}
}

// lastChange is the last event of evs that changes item.
func lastChange(evs []events.Envelope, item string) events.Envelope {
	var last events.Envelope
	for _, e := range evs {
		if e.ItemID == item && e.Type != events.PermissionGrantApplied {
			last = e
		}
	}
	return last
}

// TestEventByEventEqualsOneBatch projects the same logs one event per
// batch (every change updates a stored row) and in one batch (every row is
// written whole): the views are equal.
func TestEventByEventEqualsOneBatch(t *testing.T) {
	t.Parallel()
	live, rebuilt := newFixture(t), newFixture(t)
	a, b := newRichRun(t, "acme", "s-1"), newRichRun(t, "acme", "s-1")
	c := newRichRun(t, "globex", "s-1")
	off := offsets{}
	recs := append(off.records(t, 0, eventstest.Interleave(a.Events(), b.Events())...), off.records(t, 1, c.Events()...)...)
	live.oneByOne(t, recs)
	rebuilt.apply(t, recs)
	if l, r := live.checksumViews(t), rebuilt.checksumViews(t); !maps.Equal(l, r) {
		t.Fatalf("event by event differs from one batch:\n%v\n%v", l, r)
	}
	if sums := live.checksumViews(t); strings.HasPrefix(sums["items"], "0:") || strings.HasPrefix(sums["approvals"], "0:") ||
		strings.HasPrefix(sums["permission_grants"], "0:") || strings.HasPrefix(sums["sessions"], "0:") {
		t.Fatalf("a read model is empty: %v", sums)
	}
}

func TestListItemsPages(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	r := newRichRun(t, "acme", "")
	f.apply(t, offsets{}.records(t, 0, r.Events()...))
	all := listItems(t, f, postgres.ItemFilter{TenantID: "acme", RunID: r.RunID(), Limit: 2})
	if len(all) != 9 {
		t.Fatalf("listed %d items, want 9", len(all))
	}
	for i := 1; i < len(all); i++ {
		if all[i-1].StartedSeq >= all[i].StartedSeq {
			t.Fatalf("items out of log order: %d then %d", all[i-1].StartedSeq, all[i].StartedSeq)
		}
	}
	if other, next, err := f.store.ListItems(ctx, postgres.ItemFilter{TenantID: "globex", RunID: r.RunID()}); err != nil ||
		len(other) != 0 || next != "" {
		t.Fatalf("another tenant sees %v, %q, %v", other, next, err)
	}
	_, approvalCursor := pendingApprovalPage(t, f)
	for _, bad := range []string{"not base64!", "e30", "eyJrIjoiaXRlbSJ9", approvalCursor} {
		_, _, err := f.store.ListItems(ctx, postgres.ItemFilter{TenantID: "acme", RunID: r.RunID(), After: bad})
		if !errorsIsInvalidCursor(err) {
			t.Fatalf("cursor %q: error = %v, want ErrInvalidCursor", bad, err)
		}
	}
}

func listItems(tb testing.TB, f *fixture, filter postgres.ItemFilter) []postgres.Item {
	tb.Helper()
	var all []postgres.Item
	for page := 0; ; page++ {
		items, next, err := f.store.ListItems(context.Background(), filter)
		if err != nil {
			tb.Fatal(err)
		}
		if len(items) > filter.Limit || page > 100 {
			tb.Fatalf("page %d has %d items (limit %d)", page, len(items), filter.Limit)
		}
		all = append(all, items...)
		if next == "" {
			return all
		}
		filter.After = next
	}
}

// TestARunOrItemStartedTwiceReplacesItsRow: a log that starts an item again,
// or accepts its run again, in a later batch (which events.Fold refuses and
// the executor never writes) still projects: the batch's plain inserts meet
// the existing rows, and it is written again replacing them, the other
// run's rows of the batch included.
func TestARunOrItemStartedTwiceReplacesItsRow(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	l, other := started(t, "acme", "s-1"), started(t, "acme", "s-2")
	item := l.startTool(events.ItemCommandExecution, "shell", `{"command":"make"}`)
	off := offsets{}
	f.apply(t, off.records(t, 0, l.Events()...))
	applied := len(l.Events())

	// The log's item start and acceptance again, by hand: the test log
	// refuses them as events.Fold does.
	payload := func(v any) json.RawMessage {
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	var again []events.Envelope
	for _, e := range l.Events() {
		switch {
		case e.Type == events.ItemStarted && e.ItemID == item:
			e.Payload = payload(events.ItemStartedPayload{ItemType: events.ItemCommandExecution,
				Data: payload(events.ToolCallData{ToolCallID: "call_again", ToolName: "write_file", Arguments: "{}"})})
		case e.Type == events.RunAccepted:
			e.Payload = payload(events.RunAcceptedPayload{AgentID: "reviewer", Input: events.UserInput{Content: "again"}})
		default:
			continue
		}
		e.Seq, e.EventID = int64(applied+len(again)+1), events.NewID("evt")
		again = append(again, e)
	}
	f.apply(t, off.records(t, 0, eventstest.Interleave(again, other.Events())...))
	started := again[0].Seq
	if again[0].Type != events.ItemStarted {
		started = again[1].Seq
	}

	items, _, err := f.store.ListItems(ctx, postgres.ItemFilter{TenantID: "acme", RunID: l.RunID()})
	if err != nil || len(items) != 1 {
		t.Fatalf("items of the run: %+v, %v", items, err)
	}
	if it := items[0]; it.ToolName != "write_file" || it.StartedSeq != started {
		t.Errorf("the item started again: %+v, want the second start's", it)
	}
	run, err := f.store.GetRun(ctx, "acme", l.RunID())
	if err != nil || run.AgentID != "reviewer" {
		t.Errorf("the run accepted again: %+v, %v; want agent reviewer", run, err)
	}
	if _, err := f.store.GetRun(ctx, "acme", other.RunID()); err != nil {
		t.Errorf("the other run of the batch: %v", err)
	}
}
