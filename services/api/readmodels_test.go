package api_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/xbot-runtime/xbot/events"
)

const rmEpoch = int64(1_700_000_000_000)

// pages follows nextCursor from path and returns every element of the list
// field key, failing on a page larger than limit.
func (e *readModelEnv) pages(t *testing.T, path, token, key string, limit int) ([]map[string]any, []response) {
	t.Helper()
	var all []map[string]any
	var resps []response
	cursor := ""
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	for page := 0; page < 100; page++ {
		q := path + sep + "limit=" + rmItoa(limit)
		if cursor != "" {
			q += "&cursor=" + url.QueryEscape(cursor)
		}
		r := e.do(t, "GET", q, token, nil).want(t, http.StatusOK)
		resps = append(resps, r)
		list, ok := r.body[key].([]any)
		if !ok || len(list) > limit {
			t.Fatalf("page %d of %s: %s", page, path, r.raw)
		}
		for _, v := range list {
			all = append(all, v.(map[string]any))
		}
		if cursor = r.str("nextCursor"); cursor == "" {
			return all, resps
		}
	}
	t.Fatalf("%s: more than 100 pages", path)
	return nil, nil
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

	items, _ := e.pages(t, "/v1/runs/"+l.id()+"/items", tokenA, "items", 2)
	var ids []string
	for _, it := range items {
		ids = append(ids, it["itemId"].(string))
	}
	if !slices.Equal(ids, []string{shell, file, bad, open}) {
		t.Fatalf("items %v, want shell, file, bad, open in log order", ids)
	}
	sh := items[0]
	if sh["type"] != "command_execution" || sh["status"] != "completed" || sh["toolName"] != "shell" ||
		sh["exitCode"] != 2.0 || sh["output"] != "exit code 2\n" || sh["input"] != `{"command":"make"}` ||
		sh["startedSeq"] != 3.0 || sh["updatedSeq"] != 4.0 || sh["startedAt"] != float64(rmEpoch+20) ||
		sh["completedAt"] != float64(rmEpoch+30) || sh["durationMs"] != 10.0 {
		t.Fatalf("shell item %v", sh)
	}
	if f := items[2]; f["status"] != "failed" || f["errorCode"] != "unknown_tool" || f["errorMessage"] != "no such tool" ||
		f["output"] != nil {
		t.Fatalf("failed item %v", f)
	}
	if o := items[3]; o["status"] != "awaiting_approval" || o["completedAt"] != nil || o["durationMs"] != nil {
		t.Fatalf("open item %v", o)
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

	all, _ := e.pages(t, "/v1/approvals?status=pending", tokenA, "approvals", 2)
	var ids []string
	for _, a := range all {
		ids = append(ids, a["itemId"].(string))
	}
	if want := []string{pending[4], pending[3], pending[2], pending[1]}; !slices.Equal(ids, want) {
		t.Fatalf("pending approvals %v, want %v (newest first)", ids, want)
	}
	if a := all[0]; a["status"] != "pending" || a["toolName"] != "shell" || a["decision"] != nil || a["actor"] != nil ||
		a["input"].(map[string]any)["n"] != 4.0 || a["requestedAt"] != float64(rmEpoch+4000+30) {
		t.Fatalf("pending approval %v", a)
	}
	resolved, _ := e.pages(t, "/v1/approvals?status=resolved", tokenA, "approvals", 10)
	if len(resolved) != 1 || resolved[0]["itemId"] != pending[0] || resolved[0]["decision"] != "allow" ||
		resolved[0]["scope"] != "run" || resolved[0]["actor"].(map[string]any)["id"] != "alice" ||
		resolved[0]["resolvedSeq"] == nil || resolved[0]["resolvedAt"] == nil || resolved[0]["commandId"] == nil {
		t.Fatalf("resolved approvals %v", resolved)
	}
	byRun, _ := e.pages(t, "/v1/approvals?runId="+logs[2].id(), tokenA, "approvals", 10)
	if len(byRun) != 1 || byRun[0]["itemId"] != pending[2] {
		t.Fatalf("approvals of one run %v", byRun)
	}
	mine, _ := e.pages(t, "/v1/approvals", tokenB, "approvals", 10)
	if len(mine) != 1 || mine[0]["itemId"] != theirs {
		t.Fatalf("tenant B sees %v", mine)
	}
	if leak, _ := e.pages(t, "/v1/approvals?runId="+other.id(), tokenA, "approvals", 10); len(leak) != 0 {
		t.Fatalf("tenant A sees tenant B's approvals: %v", leak)
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

	runs, resps := e.pages(t, "/v1/sessions/chat-7/runs", tokenA, "runs", 2)
	var ids []string
	for _, r := range runs {
		ids = append(ids, r["runId"].(string))
	}
	if want := []string{logs[4].id(), logs[3].id(), logs[2].id(), logs[1].id(), logs[0].id()}; !slices.Equal(ids, want) {
		t.Fatalf("session runs %v, want %v (newest first)", ids, want)
	}
	s := resps[0].body["session"].(map[string]any)
	if s["platformSessionId"] != "chat-7" || s["runCount"] != 5.0 || s["firstRunId"] != logs[0].id() ||
		s["lastRunId"] != logs[4].id() || s["lastRunStatus"] != "running" || s["firstRunAt"] != float64(rmEpoch) ||
		s["lastActivityAt"] != float64(rmEpoch+4000+10) {
		t.Fatalf("session %v", s)
	}
	running, _ := e.pages(t, "/v1/sessions/chat-7/runs?status=running", tokenA, "runs", 10)
	if len(running) != 1 || running[0]["runId"] != logs[4].id() {
		t.Fatalf("running runs of the session %v", running)
	}
	mine, _ := e.pages(t, "/v1/sessions/chat-7/runs", tokenB, "runs", 10)
	if len(mine) != 1 || mine[0]["runId"] != theirs.id() {
		t.Fatalf("tenant B's session %v", mine)
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
			OperationID string                `json:"operationId"`
			Security    []map[string][]string `json:"security"`
			Responses   map[string]any        `json:"responses"`
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
