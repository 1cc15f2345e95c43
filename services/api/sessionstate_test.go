package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/api"
)

// GetSessionState answers from the fake's runs and owners: the head run (the
// first that has not ended, else the last); no interactions or inputs.
func (s *fakeStore) GetSessionState(_ context.Context, tenantID, sessionID string) (api.SessionStateRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.readErr != nil {
		return api.SessionStateRecord{}, s.readErr
	}
	var runs []api.RunRecord
	for _, r := range s.runs {
		if r.TenantID == tenantID && r.PlatformSessionID == sessionID {
			runs = append(runs, r)
		}
	}
	if len(runs) == 0 {
		return api.SessionStateRecord{}, fmt.Errorf("session %s: %w", sessionID, api.ErrNotFound)
	}
	slices.SortFunc(runs, func(a, b api.RunRecord) int { return a.CreatedAt.Compare(b.CreatedAt) })
	head := runs[len(runs)-1]
	if i := slices.IndexFunc(runs, func(r api.RunRecord) bool { return !events.Status(r.Status).Terminal() }); i >= 0 {
		head = runs[i]
	}
	st := api.SessionStateRecord{OwnerID: s.owners[tenantID+"/"+sessionID], Head: api.SessionRunRecord{RunID: head.RunID,
		Status: head.Status, PauseReason: head.PauseReason, LastSeq: head.LastSeq, CreatedAt: head.CreatedAt}}
	if head.Status == "running" || head.Status == "paused" {
		open := st.Head
		st.Open = &open
	}
	return st, nil
}

type sessionStateBody struct {
	Status struct {
		Status, RunID, Reason string
	}
	OpenReply *struct {
		RunID, Status, PauseReason string
	}
	PendingInteractions, ClosedInteractions []any
	QueuedInputIDs, AdmittedInputIDs        []string
	Truncated                               []string
	Cursor                                  string
}

// The state is the owner's (or an act_as principal's) to read; another
// actor of the tenant gets 403, another tenant 404.
func TestSessionStateIsTheOwnersToRead(t *testing.T) {
	t.Parallel()
	const ops = "secret-token-ops"
	e := newEnv(t, withConfig(func(c *api.Config) { c.Tokens[ops] = tenantA + "/ops/act_as" }))
	at := time.UnixMilli(1_700_000_000_000).UTC()
	e.store.addRun(api.RunRecord{RunID: "run_done", TenantID: tenantA, PlatformSessionID: "s-1", Status: "completed",
		LastSeq: 9, CreatedAt: at})
	e.store.addRun(api.RunRecord{RunID: "run_paused", TenantID: tenantA, PlatformSessionID: "s-1", Status: "paused",
		PauseReason: "awaiting_approval", LastSeq: 7, CreatedAt: at.Add(time.Second)})
	if _, err := e.store.ClaimSession(context.Background(), tenantA, "s-1", "alice"); err != nil {
		t.Fatal(err)
	}
	for _, token := range []string{tokenAlice, ops} {
		r := e.do(t, http.MethodGet, "/v1/sessions/s-1/state", token, nil)
		if r.status != http.StatusOK {
			t.Fatalf("status %d: %s", r.status, r.raw)
		}
		st := decode[sessionStateBody](t, r)
		if st.Status.Status != "waiting" || st.Status.RunID != "run_paused" || st.Status.Reason != "awaiting_approval" ||
			st.OpenReply == nil || st.OpenReply.RunID != "run_paused" || st.Cursor != "run_paused:7" ||
			st.PendingInteractions == nil || st.QueuedInputIDs == nil || st.AdmittedInputIDs == nil || st.Truncated == nil {
			t.Fatalf("state %s", r.raw)
		}
	}
	if r := e.do(t, http.MethodGet, "/v1/sessions/s-1/state", tokenA, nil); r.status != http.StatusForbidden {
		t.Fatalf("another actor: status %d: %s", r.status, r.raw)
	}
	for _, c := range []struct{ token, path string }{{tokenB, "/v1/sessions/s-1/state"}, {tokenAlice, "/v1/sessions/s-2/state"}} {
		if r := e.do(t, http.MethodGet, c.path, c.token, nil); r.status != http.StatusNotFound {
			t.Fatalf("%s: status %d: %s", c.path, r.status, r.raw)
		}
	}
}

func TestSessionStateIsDocumented(t *testing.T) {
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
	op := doc.Paths["/v1/sessions/{platformSessionId}/state"]["get"]
	if op.OperationID != "getSessionState" || len(op.Security) == 0 {
		t.Fatalf("GET state: %+v", op)
	}
	for _, code := range []string{"200", "401", "403", "404"} {
		if op.Responses[code] == nil {
			t.Errorf("GET state documents no %s answer", code)
		}
	}
}
