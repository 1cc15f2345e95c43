package postgres_test

import (
	"context"
	"maps"
	"testing"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/events/eventstest"
	"github.com/xbot-runtime/xbot/projections/postgres"
)

// modelCall completes an assistant_message item whose call reported usage
// (nil: none reported).
func (l *runLog) modelCall(turn int, usage *events.Usage) {
	item := events.NewID("itm")
	l.Add(events.Draft{Type: events.ItemStarted, ItemID: item,
		Payload: events.ItemStartedPayload{ItemType: events.ItemAssistantMessage}})
	l.Add(events.Draft{Type: events.ItemCompleted, ItemID: item, Payload: events.ItemCompletedPayload{
		ItemType: events.ItemAssistantMessage, Status: events.ItemStatusCompleted, Content: "ok",
		Data: eventstest.Raw(events.AssistantData{Turn: turn, Usage: usage})}})
}

func (l *runLog) compacted(usage *events.Usage) {
	l.Add(events.Draft{Type: events.ContextCompacted, Payload: events.ContextCompactedPayload{
		ArtifactID: events.NewID("cmp"), CutoffEventSeq: l.State().LastSeq, TriggerReason: events.CompactBeforeModelRequest,
		SourceRange: events.SeqRange{FromSeq: 1, ToSeq: l.State().LastSeq}, Summary: events.CompactionSummary{UserGoal: "g"},
		TokenStats: events.TokenStats{BeforeTokens: 900, AfterTokens: 100}, Usage: usage}})
}

func (l *runLog) freeze(hash string) {
	l.Add(events.Draft{Type: events.CapabilitySnapshotFrozen, Payload: events.SnapshotFrozenPayload{
		Hash: hash, Snapshot: eventstest.Raw(map[string]any{"pauseTtlMs": 60000, "tools": []string{"shell"}})}})
}

func getRun(tb testing.TB, f *fixture, tenant, id string) postgres.Run {
	tb.Helper()
	r, err := f.store.GetRun(context.Background(), tenant, id)
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

// Usage totals sum the model calls and the compactions, whether the events
// come one per batch or all in one (a rebuild), and equal views follow.
func TestRunUsageTotals(t *testing.T) {
	t.Parallel()
	l := newRun(t, "acme", "s-1")
	l.accept(events.NewID("cmd"), "k-usage")
	l.freeze("sha256:abc")
	l.Started("exec-1")
	l.modelCall(0, &events.Usage{PromptTokens: 100, CompletionTokens: 20, TotalTokens: 120})
	l.modelCall(1, nil) // a provider that reports no usage still made a call
	l.compacted(&events.Usage{PromptTokens: 800, CompletionTokens: 60, TotalTokens: 860})
	l.compacted(nil)
	l.modelCall(2, &events.Usage{PromptTokens: 50, CompletionTokens: 5, TotalTokens: 55})
	item := l.startTool(events.ItemToolCall, "shell", `{}`)
	l.completeTool(item, events.ItemToolCall, "shell", "done", nil) // not a model call
	l.Completed("ok")

	live, rebuilt := newFixture(t), newFixture(t)
	recs := offsets{}.records(t, 3, l.Events()...)
	live.oneByOne(t, recs)
	rebuilt.apply(t, recs)
	want := postgres.Usage{ModelCalls: 3, PromptTokens: 950, CompletionTokens: 85, TotalTokens: 1035, Compactions: 2}
	for name, f := range map[string]*fixture{"live": live, "rebuilt": rebuilt} {
		r := getRun(t, f, "acme", l.RunID())
		if r.Usage != want || r.SnapshotHash != "sha256:abc" || r.Status != "completed" || r.QueuePosition != nil {
			t.Fatalf("%s: run usage %+v hash %q status %s position %v", name, r.Usage, r.SnapshotHash, r.Status, r.QueuePosition)
		}
		if r.AcceptedPartition != 3 || r.AcceptedOffset != 0 {
			t.Fatalf("%s: accepted at %d/%d, want 3/0", name, r.AcceptedPartition, r.AcceptedOffset)
		}
	}
	if a, b := live.checksumViews(t), rebuilt.checksumViews(t); !maps.Equal(a, b) {
		t.Fatalf("live and rebuilt views differ:\n%v\n%v", a, b)
	}
}

// TestQueuePosition: three runs of one sandbox key queue behind the key's
// running run in the order of their runtime.run.accepted offsets, which is
// not their created_at order; a run of another key is not behind them; a
// paused run is not ahead (it yields its key); a place the run's log
// recorded (runtime.run.queued) is the position, the last one winning.
func TestQueuePosition(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	key := events.SandboxKey{TenantID: "acme", WorkspaceID: "ws-1", AgentID: "assistant", OwnerID: "u-1"}
	other := key
	other.OwnerID = "u-2"
	active := newRun(t, "acme", "s-1")
	active.acceptKey(key)
	active.Started("exec-1")
	var queued [3]*runLog
	for i := range queued {
		queued[i] = newRun(t, "acme", "s-1")
		queued[i].At(clock + int64(10-i)*1000) // created_at runs against the log order
		queued[i].acceptKey(key)
	}
	alone := newRun(t, "acme", "s-2")
	alone.acceptKey(other)
	off := offsets{}
	f.apply(t, off.records(t, 5, active.Events()...))
	for _, l := range append(queued[:], alone) {
		f.apply(t, off.records(t, 5, l.Events()...))
	}
	wantPositions(t, f, map[*runLog]int64{queued[0]: 1, queued[1]: 2, queued[2]: 3, alone: 0}, active)

	// The active run pauses: it yields its key, so it is not ahead. It ends
	// and the first queued run starts: everyone moves up.
	mark := len(active.Events())
	active.Paused(events.PauseAwaitingUserInput)
	f.apply(t, off.records(t, 5, active.Events()[mark:]...))
	wantPositions(t, f, map[*runLog]int64{queued[0]: 0, queued[1]: 1, queued[2]: 2}, active)
	mark, next := len(active.Events()), len(queued[0].Events())
	active.Cancelled("", "done")
	queued[0].Started("exec-1")
	f.apply(t, off.records(t, 5, append(active.Events()[mark:], queued[0].Events()[next:]...)...))
	wantPositions(t, f, map[*runLog]int64{queued[1]: 1, queued[2]: 2}, queued[0])

	// A place the log recorded wins: the last one (the run moved up).
	mark = len(queued[2].Events())
	queued[2].Queued("", 2)
	queued[2].Queued("", 1)
	f.apply(t, off.records(t, 5, queued[2].Events()[mark:]...))
	wantPositions(t, f, map[*runLog]int64{queued[1]: 1, queued[2]: 1}, queued[0])
	mark = len(queued[2].Events())
	queued[2].Queued("", 2)
	f.apply(t, off.records(t, 5, queued[2].Events()[mark:]...))

	// Listing shows the same positions.
	runs, _, err := f.store.ListRuns(context.Background(), postgres.RunFilter{TenantID: "acme", Status: "queued"})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, r := range runs {
		got[r.RunID] = *r.QueuePosition
	}
	if want := map[string]int64{queued[1].RunID(): 1, queued[2].RunID(): 2, alone.RunID(): 0}; !maps.Equal(got, want) {
		t.Fatalf("listed positions %v, want %v", got, want)
	}
}

func wantPositions(tb testing.TB, f *fixture, want map[*runLog]int64, notQueued ...*runLog) {
	tb.Helper()
	for l, pos := range want {
		r := getRun(tb, f, "acme", l.RunID())
		if r.Status != "queued" || r.QueuePosition == nil || *r.QueuePosition != pos {
			tb.Fatalf("run %s: status %s position %v, want queued at %d", l.RunID(), r.Status, r.QueuePosition, pos)
		}
	}
	for _, l := range notQueued {
		if r := getRun(tb, f, "acme", l.RunID()); r.QueuePosition != nil {
			tb.Fatalf("%s run %s has queue position %d", r.Status, l.RunID(), *r.QueuePosition)
		}
	}
}

func (l *runLog) acceptKey(sk events.SandboxKey) {
	l.Add(events.Draft{Type: events.RunAccepted, CommandID: events.NewID("cmd"), Payload: events.RunAcceptedPayload{
		AgentID: "assistant", Input: events.UserInput{Content: "queue me"}, SandboxKey: sk,
		IdempotencyKey: "k-" + l.RunID(), Actor: events.Actor{Type: "user", ID: "u-1"}}})
}
