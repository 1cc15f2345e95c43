package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/services/api"
)

func TestGetRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	run := seedRun(e, tenantA, "paused")
	r := e.do(t, "GET", "/v1/runs/"+run.RunID, tokenA, nil).want(t, http.StatusOK)
	input, _ := r.body["input"].(map[string]any)
	key, _ := r.body["sandboxKey"].(map[string]any)
	if r.str("status") != "paused" || r.str("runId") != run.RunID || input["content"] != "hi" || key["workspaceId"] != "default" {
		t.Fatalf("run %s", r.raw)
	}
	if r.body["createdAt"] != float64(1_700_000_000_000) || r.body["updatedAt"] != float64(1_700_000_001_000) {
		t.Fatalf("times are not Unix ms: %s", r.raw)
	}
	e.do(t, "GET", "/v1/runs/run_nope", tokenA, nil).wantCode(t, http.StatusNotFound, "run_not_found")
}

func TestListRunEventsPages(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	run := seedRun(e, tenantA, "running")
	for seq := int64(1); seq <= 5; seq++ {
		env := fmt.Sprintf(`{"eventId":"evt_%d","runId":%q,"seq":%d,"schemaVersion":"v1","type":"runtime.item.delta","payload":{"delta":"x"},"futureField":1}`, seq, run.RunID, seq)
		e.store.addEvent(api.EventRecord{RunID: run.RunID, Seq: seq, TenantID: tenantA,
			Type: "runtime.item.delta", Envelope: []byte(env)})
	}
	r := e.do(t, "GET", "/v1/runs/"+run.RunID+"/events?after_seq=1&limit=2", tokenA, nil).want(t, http.StatusOK)
	evs, _ := r.body["events"].([]any)
	if len(evs) != 2 || r.body["nextAfterSeq"] != float64(3) {
		t.Fatalf("page %s", r.raw)
	}
	first, _ := evs[0].(map[string]any)
	if first["seq"] != float64(2) || first["eventId"] != "evt_2" || first["futureField"] != float64(1) {
		t.Fatalf("event is not the stored envelope: %v", first)
	}
	r = e.do(t, "GET", "/v1/runs/"+run.RunID+"/events?after_seq=5", tokenA, nil).want(t, http.StatusOK)
	if evs, ok := r.body["events"].([]any); !ok || len(evs) != 0 || r.body["nextAfterSeq"] != float64(5) {
		t.Fatalf("empty page %s", r.raw)
	}
	for _, q := range []string{"limit=0", "limit=1001", "after_seq=-1", "limit=x"} {
		e.do(t, "GET", "/v1/runs/"+run.RunID+"/events?"+q, tokenA, nil).wantCode(t, http.StatusUnprocessableEntity, "validation_failed")
	}
}

// TestListRunEventsPagesByBytes: with MaxEventPageBytes set, a page ends
// before the event that would pass it, and reading on from nextAfterSeq
// returns the rest with no gap.
func TestListRunEventsPagesByBytes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withConfig(func(c *api.Config) { c.MaxEventPageBytes = 400 }))
	run := seedRun(e, tenantA, "running")
	for seq := int64(1); seq <= 6; seq++ {
		env := fmt.Sprintf(`{"eventId":"evt_%d","runId":%q,"seq":%d,"schemaVersion":"v1","type":"runtime.item.delta","payload":{"delta":%q}}`,
			seq, run.RunID, seq, strings.Repeat("x", 100))
		e.store.addEvent(api.EventRecord{RunID: run.RunID, Seq: seq, TenantID: tenantA, Type: "runtime.item.delta", Envelope: []byte(env)})
	}
	var seqs []float64
	for after, pages := float64(0), 0; ; pages++ {
		r := e.do(t, "GET", fmt.Sprintf("/v1/runs/%s/events?after_seq=%d&limit=1000", run.RunID, int(after)), tokenA, nil).want(t, http.StatusOK)
		evs, _ := r.body["events"].([]any)
		if len(evs) == 0 {
			if len(seqs) != 6 || pages < 3 {
				t.Fatalf("read seqs %v in %d pages, want 1..6 in at least 3", seqs, pages)
			}
			return
		}
		if len(evs) > 2 {
			t.Fatalf("a page of %d events of about 200 bytes under a 400-byte cap: %s", len(evs), r.raw)
		}
		for _, ev := range evs {
			seqs = append(seqs, ev.(map[string]any)["seq"].(float64))
			if seqs[len(seqs)-1] != float64(len(seqs)) {
				t.Fatalf("seqs %v have a gap", seqs)
			}
		}
		after = r.body["nextAfterSeq"].(float64)
	}
}

func TestListRuns(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	seedRun(e, tenantA, "running")
	seedRun(e, tenantB, "running")
	r := e.do(t, "GET", "/v1/runs?status=running&platformSessionId=s1&cursor=c1&limit=10", tokenA, nil).want(t, http.StatusOK)
	runs, _ := r.body["runs"].([]any)
	if len(runs) != 1 || r.str("nextCursor") != "next-page" {
		t.Fatalf("list %s", r.raw)
	}
	want := api.RunFilter{TenantID: tenantA, PlatformSessionID: "s1", Status: "running", After: "c1", Limit: 10}
	if e.store.lastFilter() != want {
		t.Fatalf("filter %+v, want %+v", e.store.lastFilter(), want)
	}
	e.do(t, "GET", "/v1/runs?status=sleeping", tokenA, nil).wantCode(t, http.StatusUnprocessableEntity, "validation_failed")
	e.store.failList(fmt.Errorf("decode cursor: %w", api.ErrInvalidCursor))
	e.do(t, "GET", "/v1/runs?cursor=forged", tokenA, nil).wantCode(t, http.StatusUnprocessableEntity, "validation_failed").
		wantLocation(t, "query.cursor")
}

func TestGetCommand(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.store.put(api.CommandRecord{CommandID: "cmd_1", RunID: "run_1", TenantID: tenantA, Type: "CancelRun",
		Outcome: "applied", FirstOutcome: "accepted", Seq: 7, UpdatedAt: time.UnixMilli(1_700_000_000_000)})
	r := e.do(t, "GET", "/v1/commands/cmd_1", tokenA, nil).want(t, http.StatusOK)
	if r.str("outcome") != "applied" || r.str("firstOutcome") != "accepted" || r.body["updatedAt"] != float64(1_700_000_000_000) {
		t.Fatalf("command %s", r.raw)
	}
	e.do(t, "GET", "/v1/commands/cmd_1", tokenB, nil).wantCode(t, http.StatusNotFound, "command_not_found")
	e.do(t, "GET", "/v1/commands/cmd_2", tokenA, nil).wantCode(t, http.StatusNotFound, "command_not_found")
}
