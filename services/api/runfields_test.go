package api_test

import (
	"net/http"
	"testing"

	"github.com/xbot-runtime/xbot/events"
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
		Hash: "sha256:feed", Snapshot: active.raw(map[string]any{"pauseTtlMs": 1000})}})
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
	usage, _ := r.body["usage"].(map[string]any)
	want := map[string]float64{"modelCalls": 1, "promptTokens": 50, "completionTokens": 7, "totalTokens": 57, "compactions": 1}
	for k, v := range want {
		if usage[k] != v {
			t.Fatalf("usage %v, want %v", usage, want)
		}
	}
	if _, ok := r.body["queuePosition"]; ok || r.str("snapshotHash") != "sha256:feed" || r.str("status") != "running" {
		t.Fatalf("active run %s", r.raw)
	}
	for l, pos := range map[*rmLog]float64{first: 1, second: 2} {
		r := e.do(t, "GET", "/v1/runs/"+l.id(), tokenA, nil).want(t, http.StatusOK)
		if r.body["queuePosition"] != pos || r.str("snapshotHash") != "" || r.body["usage"].(map[string]any)["modelCalls"] != 0.0 {
			t.Fatalf("queued run %s, want position %v", r.raw, pos)
		}
	}
	list, _ := e.pages(t, "/v1/runs?status=queued", tokenA, "runs", 10)
	listed := map[any]any{}
	for _, r := range list {
		listed[r["runId"]] = r["queuePosition"]
	}
	if len(listed) != 2 || listed[first.id()] != 1.0 || listed[second.id()] != 2.0 {
		t.Fatalf("queued runs listed with positions %v", listed)
	}
}
