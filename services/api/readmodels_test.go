package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/api/client"
)

const rmEpoch = int64(1_700_000_000_000)

// pages reads a cursor-paged list from its first page to its last with
// pages of limit, failing on an error or a page larger than limit; it
// returns every row and every page.
func pages[P, R any](t *testing.T, limit int, list func(client.Page) (P, error), rows func(P) ([]R, string)) ([]R, []P) {
	t.Helper()
	var all []R
	var got []P
	p := client.Page{Limit: limit}
	for range 100 {
		page, err := list(p)
		if err != nil {
			t.Fatalf("page %d: %v", len(got), err)
		}
		got = append(got, page)
		rs, next := rows(page)
		if len(rs) > limit {
			t.Fatalf("page %d has %d rows, over its limit %d", len(got)-1, len(rs), limit)
		}
		if all = append(all, rs...); next == "" {
			return all, got
		}
		p.Cursor = next
	}
	t.Fatal("more than 100 pages")
	return nil, nil
}

// items reads every item of a run as token, in pages of limit.
func (e *readModelEnv) items(t *testing.T, token, runID string, limit int) []client.Item {
	t.Helper()
	api := e.apiAs(t, token)
	all, _ := pages(t, limit, func(p client.Page) (client.ItemPage, error) { return api.ListItems(context.Background(), runID, p) },
		func(p client.ItemPage) ([]client.Item, string) { return p.Items, p.NextCursor })
	return all
}

// approvals reads every approval q selects as token, in pages of limit.
func (e *readModelEnv) approvals(t *testing.T, token string, q client.ApprovalQuery, limit int) []client.Approval {
	t.Helper()
	api := e.apiAs(t, token)
	all, _ := pages(t, limit, func(p client.Page) (client.ApprovalPage, error) {
		q.Page = p
		return api.ListApprovals(context.Background(), q)
	}, func(p client.ApprovalPage) ([]client.Approval, string) { return p.Approvals, p.NextCursor })
	return all
}

// runs reads every run q selects as token, in pages of limit.
func (e *readModelEnv) runs(t *testing.T, token string, q client.RunQuery, limit int) []client.Run {
	t.Helper()
	api := e.apiAs(t, token)
	all, _ := pages(t, limit, func(p client.Page) (client.RunPage, error) {
		q.Page = p
		return api.ListRuns(context.Background(), q)
	}, func(p client.RunPage) ([]client.Run, string) { return p.Runs, p.NextCursor })
	return all
}

// sessionRuns reads every run of a session in status ("": any) as token,
// in pages of limit, and the pages.
func (e *readModelEnv) sessionRuns(t *testing.T, token, session, status string, limit int) ([]client.Run, []client.SessionRunPage) {
	t.Helper()
	api := e.apiAs(t, token)
	return pages(t, limit, func(p client.Page) (client.SessionRunPage, error) {
		return api.ListSessionRuns(context.Background(), session, client.RunQuery{Status: status, Page: p})
	}, func(p client.SessionRunPage) ([]client.Run, string) { return p.Runs, p.NextCursor })
}

func rmItoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func TestListRunItems(t *testing.T) {
	t.Parallel()
	e := newReadModelEnv(t)
	l := newRMLog(t, tenantA, "s-1", rmEpoch)
	shell := l.tool(events.ItemCommandExecution, "shell", `{"command":"make"}`, "exit code 2\n", &events.ExecData{ExitCode: 2})
	file := l.tool(events.ItemFileChange, "write_file", `{"path":"a"}`, "wrote a", nil)
	bad := l.startTool(events.ItemToolCall, "teleport", `{}`)
	l.add(events.Draft{Type: events.ItemFailed, ItemID: bad, Payload: events.ItemFailedPayload{
		ItemType: events.ItemToolCall, ErrorCode: "unknown_tool", Message: "no such tool"}})
	open := l.awaitApproval(`{"command":"deploy"}`)
	e.project(t, l)

	items := e.items(t, tokenA, l.id(), 2)
	var ids []string
	for _, it := range items {
		ids = append(ids, it.ItemID)
	}
	if !slices.Equal(ids, []string{shell, file, bad, open}) {
		t.Fatalf("items %v, want shell, file, bad, open in log order", ids)
	}
	sh := items[0]
	if sh.Type != "command_execution" || sh.Status != "completed" || sh.ToolName != "shell" ||
		!equalPtr(sh.ExitCode, 2) || !equalPtr(sh.Output, "exit code 2\n") || sh.Input != `{"command":"make"}` ||
		sh.StartedSeq != 3 || sh.UpdatedSeq != 4 || sh.StartedAt != rmEpoch+20 ||
		!equalPtr(sh.CompletedAt, rmEpoch+30) || !equalPtr(sh.DurationMs, 10) {
		t.Fatalf("shell item %+v", sh)
	}
	if f := items[2]; f.Status != "failed" || f.ErrorCode != "unknown_tool" || f.ErrorMessage != "no such tool" ||
		f.Output != nil {
		t.Fatalf("failed item %+v", f)
	}
	if o := items[3]; o.Status != "awaiting_approval" || o.CompletedAt != nil || o.DurationMs != nil {
		t.Fatalf("open item %+v", o)
	}

	e.do(t, "GET", "/v1/runs/"+l.id()+"/items", tokenB, nil).wantCode(t, http.StatusNotFound, "run_not_found")
	e.do(t, "GET", "/v1/runs/run_nope/items", tokenA, nil).wantCode(t, http.StatusNotFound, "run_not_found")
	for _, q := range []string{"limit=0", "limit=201", "limit=x"} {
		e.do(t, "GET", "/v1/runs/"+l.id()+"/items?"+q, tokenA, nil).wantCode(t, http.StatusUnprocessableEntity, "validation_failed")
	}
	e.do(t, "GET", "/v1/runs/"+l.id()+"/items?cursor=forged", tokenA, nil).
		wantCode(t, http.StatusUnprocessableEntity, "validation_failed").wantLocation(t, "query.cursor")
}

func TestListApprovals(t *testing.T) {
	t.Parallel()
	e := newReadModelEnv(t)
	var pending []string
	var logs []*rmLog
	for i := range 5 {
		l := newRMLog(t, tenantA, "s-1", rmEpoch+int64(i)*1000)
		pending = append(pending, l.awaitApproval(`{"command":"deploy","n":`+rmItoa(i)+`}`))
		logs = append(logs, l)
	}
	decided := logs[0]
	decided.decide(pending[0], "allow", "run")
	other := newRMLog(t, tenantB, "s-1", rmEpoch)
	theirs := other.awaitApproval(`{}`)
	e.project(t, append(logs, other)...)

	all := e.approvals(t, tokenA, client.ApprovalQuery{Status: client.ApprovalPending}, 2)
	var ids []string
	for _, a := range all {
		ids = append(ids, a.ItemID)
	}
	if want := []string{pending[4], pending[3], pending[2], pending[1]}; !slices.Equal(ids, want) {
		t.Fatalf("pending approvals %v, want %v (newest first)", ids, want)
	}
	var input struct{ N int }
	if a := all[0]; a.Status != client.ApprovalPending || a.ToolName != "shell" || a.Decision != "" || a.Actor != nil ||
		json.Unmarshal(a.Input, &input) != nil || input.N != 4 || a.RequestedAt != rmEpoch+4000+30 {
		t.Fatalf("pending approval %+v", a)
	}
	resolved := e.approvals(t, tokenA, client.ApprovalQuery{Status: client.ApprovalResolved}, 10)
	if len(resolved) != 1 || resolved[0].ItemID != pending[0] || resolved[0].Decision != "allow" ||
		resolved[0].Scope != "run" || resolved[0].Actor == nil || resolved[0].Actor.ID != "alice" ||
		resolved[0].ResolvedSeq == nil || resolved[0].ResolvedAt == nil || resolved[0].CommandID == "" {
		t.Fatalf("resolved approvals %+v", resolved)
	}
	byRun := e.approvals(t, tokenA, client.ApprovalQuery{RunID: logs[2].id()}, 10)
	if len(byRun) != 1 || byRun[0].ItemID != pending[2] {
		t.Fatalf("approvals of one run %+v", byRun)
	}
	mine := e.approvals(t, tokenB, client.ApprovalQuery{}, 10)
	if len(mine) != 1 || mine[0].ItemID != theirs {
		t.Fatalf("tenant B sees %+v", mine)
	}
	if leak := e.approvals(t, tokenA, client.ApprovalQuery{RunID: other.id()}, 10); len(leak) != 0 {
		t.Fatalf("tenant A sees tenant B's approvals: %+v", leak)
	}
	for _, q := range []string{"status=open", "limit=0", "limit=201"} {
		e.do(t, "GET", "/v1/approvals?"+q, tokenA, nil).wantCode(t, http.StatusUnprocessableEntity, "validation_failed")
	}
	e.do(t, "GET", "/v1/approvals?cursor=e30", tokenA, nil).
		wantCode(t, http.StatusUnprocessableEntity, "validation_failed").wantLocation(t, "query.cursor")
	e.do(t, "GET", "/v1/approvals", "", nil).wantCode(t, http.StatusUnauthorized, "unauthorized")
}

func TestListSessionRuns(t *testing.T) {
	t.Parallel()
	e := newReadModelEnv(t)
	var logs []*rmLog
	for i := range 5 {
		l := newRMLog(t, tenantA, "chat-7", rmEpoch+int64(i)*1000)
		if i < 4 {
			l.add(events.Draft{Type: events.RunCompleted})
		}
		logs = append(logs, l)
	}
	elsewhere := newRMLog(t, tenantA, "chat-8", rmEpoch)
	theirs := newRMLog(t, tenantB, "chat-7", rmEpoch)
	e.project(t, append(logs, elsewhere, theirs)...)

	runs, resps := e.sessionRuns(t, tokenA, "chat-7", "", 2)
	var ids []string
	for _, r := range runs {
		ids = append(ids, r.RunID)
	}
	if want := []string{logs[4].id(), logs[3].id(), logs[2].id(), logs[1].id(), logs[0].id()}; !slices.Equal(ids, want) {
		t.Fatalf("session runs %v, want %v (newest first)", ids, want)
	}
	want := client.Session{PlatformSessionID: "chat-7", RunCount: 5, FirstRunID: logs[0].id(), LastRunID: logs[4].id(),
		LastRunStatus: "running", FirstRunAt: rmEpoch, LastActivityAt: rmEpoch + 4000 + 10}
	if s := resps[0].Session; s != want {
		t.Fatalf("session %+v, want %+v", s, want)
	}
	running, _ := e.sessionRuns(t, tokenA, "chat-7", "running", 10)
	if len(running) != 1 || running[0].RunID != logs[4].id() {
		t.Fatalf("running runs of the session %+v", running)
	}
	mine, _ := e.sessionRuns(t, tokenB, "chat-7", "", 10)
	if len(mine) != 1 || mine[0].RunID != theirs.id() {
		t.Fatalf("tenant B's session %+v", mine)
	}
	e.do(t, "GET", "/v1/sessions/chat-9/runs", tokenA, nil).wantCode(t, http.StatusNotFound, "not_found")
	e.do(t, "GET", "/v1/sessions/chat-8/runs", tokenB, nil).wantCode(t, http.StatusNotFound, "not_found")
	for _, q := range []string{"limit=0", "limit=501", "status=sleeping"} {
		e.do(t, "GET", "/v1/sessions/chat-7/runs?"+q, tokenA, nil).wantCode(t, http.StatusUnprocessableEntity, "validation_failed")
	}
	e.do(t, "GET", "/v1/sessions/chat-7/runs?cursor=bm9wZQ", tokenA, nil).
		wantCode(t, http.StatusUnprocessableEntity, "validation_failed").wantLocation(t, "query.cursor")
}

func TestReadModelEndpointsAreDocumented(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.do(t, "GET", "/openapi.json", "", nil).want(t, http.StatusOK)
	var doc struct {
		Paths map[string]map[string]struct {
			OperationID string                     `json:"operationId"`
			Security    []map[string][]string      `json:"security"`
			Responses   map[string]json.RawMessage `json:"responses"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(r.raw, &doc); err != nil {
		t.Fatal(err)
	}
	for path, id := range map[string]string{"/v1/runs/{runId}/items": "listRunItems",
		"/v1/approvals": "listApprovals", "/v1/sessions/{platformSessionId}/runs": "listSessionRuns"} {
		op := doc.Paths[path]["get"]
		if op.OperationID != id || len(op.Security) == 0 || op.Responses["200"] == nil || op.Responses["422"] == nil {
			t.Errorf("GET %s: %+v", path, op)
		}
	}
}

// equalPtr reports whether p points at want.
func equalPtr[T comparable](p *T, want T) bool { return p != nil && *p == want }
