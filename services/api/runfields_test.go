package api_test

import (
	"bytes"
	"context"
	"net/http"
	"testing"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/api/client"
)

// queuedRMLog accepts a run with newRMLog's sandbox key and leaves it queued.
func queuedRMLog(t *testing.T, tenant string, createdAt int64) *rmLog {
	return acceptedRMLog(t, tenant, "s-q", "later", createdAt)
}

// TestRunShowsUsageSnapshotAndQueuePosition: the active run of a sandbox
// key shows its usage and snapshot hash and no queue position; the two runs
// queued behind it show theirs, by GET and by list.
func TestRunShowsUsageSnapshotAndQueuePosition(t *testing.T) {
	t.Parallel()
	e := newReadModelEnv(t)
	active := newRMLog(t, tenantA, "s-q", rmEpoch)
	active.add(events.Draft{Type: events.CapabilitySnapshotFrozen, Payload: events.SnapshotFrozenPayload{
		Hash: "sha256:feed", Snapshot: active.raw(events.SnapshotGovernance{PauseTTLMs: 1000})}})
	item := events.NewID("itm")
	active.add(events.Draft{Type: events.ItemStarted, ItemID: item,
		Payload: events.ItemStartedPayload{ItemType: events.ItemAssistantMessage}})
	active.add(events.Draft{Type: events.ItemCompleted, ItemID: item, Payload: events.ItemCompletedPayload{
		ItemType: events.ItemAssistantMessage, Content: "hi", Data: active.raw(events.AssistantData{
			Usage: &events.Usage{PromptTokens: 40, CompletionTokens: 2, TotalTokens: 42}})}})
	active.add(events.Draft{Type: events.ContextCompacted, Payload: events.ContextCompactedPayload{
		ArtifactID: events.NewID("cmp"), TriggerReason: events.CompactManual,
		Usage: &events.Usage{PromptTokens: 10, CompletionTokens: 5, TotalTokens: 15}}})
	e.project(t, active)
	first, second := queuedRMLog(t, tenantA, rmEpoch+2000), queuedRMLog(t, tenantA, rmEpoch+1000)
	e.project(t, first)
	e.project(t, second) // accepted after first, though created earlier

	r := e.do(t, "GET", "/v1/runs/"+active.id(), tokenA, nil).want(t, http.StatusOK)
	run := decode[client.Run](t, r)
	if want := (client.Usage{ModelCalls: 1, PromptTokens: 50, CompletionTokens: 7, TotalTokens: 57, Compactions: 1}); run.Usage != want {
		t.Fatalf("usage %+v, want %+v", run.Usage, want)
	}
	// The active run has no queue position: the field is absent, not null.
	if bytes.Contains(r.raw, []byte(`"queuePosition"`)) || run.SnapshotHash != "sha256:feed" || run.Status != "running" {
		t.Fatalf("active run %s", r.raw)
	}
	api := e.apiAs(t, tokenA)
	for l, pos := range map[*rmLog]int64{first: 1, second: 2} {
		run, err := api.GetRun(context.Background(), l.id())
		if err != nil || !equalPtr(run.QueuePosition, pos) || run.SnapshotHash != "" || run.Usage != (client.Usage{}) {
			t.Fatalf("queued run %+v (%v), want position %d", run, err, pos)
		}
	}
	listed := map[string]int64{}
	for _, r := range e.runs(t, tokenA, client.RunQuery{Status: "queued"}, 10) {
		if r.QueuePosition != nil {
			listed[r.RunID] = *r.QueuePosition
		}
	}
	if len(listed) != 2 || listed[first.id()] != 1 || listed[second.id()] != 2 {
		t.Fatalf("queued runs listed with positions %v", listed)
	}
}
