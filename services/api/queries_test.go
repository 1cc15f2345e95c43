package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/services/api"
	"github.com/xbot-runtime/xbot/services/api/client"
)

func TestGetRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	run := seedRun(e, tenantA, "paused")
	r := e.do(t, "GET", "/v1/runs/"+run.RunID, tokenA, nil).want(t, http.StatusOK)
	got := decode[client.Run](t, r)
	if got.Status != "paused" || got.RunID != run.RunID || got.Input.Content != "hi" || got.SandboxKey.WorkspaceID != "default" {
		t.Fatalf("run %s", r.raw)
	}
	if got.CreatedAt != 1_700_000_000_000 || got.UpdatedAt != 1_700_000_001_000 {
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
	r := e.do(t, "GET", "/v1/runs/"+run.RunID+"/events?afterSeq=1&limit=2", tokenA, nil).want(t, http.StatusOK)
	// The envelopes as sent, byte for byte: a field no reader knows yet is kept.
	var raw struct {
		Events       []json.RawMessage `json:"events"`
		NextAfterSeq int64             `json:"nextAfterSeq"`
	}
	if err := json.Unmarshal(r.raw, &raw); err != nil || len(raw.Events) != 2 || raw.NextAfterSeq != 3 {
		t.Fatalf("page %s (%v)", r.raw, err)
	}
	if want := fmt.Sprintf(`{"eventId":"evt_2","runId":%q,"seq":2,"schemaVersion":"v1","type":"runtime.item.delta","payload":{"delta":"x"},"futureField":1}`, run.RunID); string(raw.Events[0]) != want {
		t.Fatalf("event is not the stored envelope: %s", raw.Events[0])
	}
	page := decode[client.EventPage](t, e.do(t, "GET", "/v1/runs/"+run.RunID+"/events?afterSeq=5", tokenA, nil).want(t, http.StatusOK))
	if page.Events == nil || len(page.Events) != 0 || page.NextAfterSeq != 5 {
		t.Fatalf("empty page %+v", page)
	}
	for _, q := range []string{"limit=0", "limit=1001", "afterSeq=-1", "after_seq=-1", "limit=x"} {
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
	var seqs []int64
	pages := 0
	err := e.apiAs(t, tokenA).EventPages(context.Background(), run.RunID, 0, 1000, func(p client.EventPage) error {
		pages++
		if len(p.Events) > 2 {
			return fmt.Errorf("a page of %d events of about 200 bytes under a 400-byte cap", len(p.Events))
		}
		for _, ev := range p.Events {
			if seqs = append(seqs, ev.Seq); ev.Seq != int64(len(seqs)) {
				return fmt.Errorf("seqs %v have a gap", seqs)
			}
		}
		return nil
	})
	if err != nil || len(seqs) != 6 || pages < 3 {
		t.Fatalf("read seqs %v in %d pages (%v), want 1..6 in at least 3", seqs, pages, err)
	}
}

func TestListRuns(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	seedRun(e, tenantA, "running")
	seedRun(e, tenantB, "running")
	page, err := e.apiAs(t, tokenA).ListRuns(context.Background(), client.RunQuery{Status: "running", PlatformSessionID: "s1",
		Page: client.Page{Cursor: "c1", Limit: 10}})
	if err != nil || len(page.Runs) != 1 || page.NextCursor != "next-page" {
		t.Fatalf("list %+v %v", page, err)
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
	cmd, err := e.apiAs(t, tokenA).GetCommand(context.Background(), "cmd_1")
	if err != nil || cmd.Outcome != client.OutcomeApplied || cmd.FirstOutcome != client.OutcomeAccepted || cmd.UpdatedAt != 1_700_000_000_000 {
		t.Fatalf("command %+v %v", cmd, err)
	}
	e.do(t, "GET", "/v1/commands/cmd_1", tokenB, nil).wantCode(t, http.StatusNotFound, "command_not_found")
	e.do(t, "GET", "/v1/commands/cmd_2", tokenA, nil).wantCode(t, http.StatusNotFound, "command_not_found")
}
