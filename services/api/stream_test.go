package api_test

import (
	"encoding/json"
	"net/http"
	"testing"
)

// The stream endpoints are tested end to end in services/stack
// (TestUIStream…); here: their contract without a live hub.

func TestStreamsUnavailableUntilEnabled(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	run := seedRun(e, tenantA, "running")
	e.do(t, "GET", "/v1/runs/"+run.RunID+"/stream", tokenA, nil).wantCode(t, http.StatusServiceUnavailable, "unavailable")
	e.do(t, "GET", "/v1/sessions/s1/stream", tokenA, nil).wantCode(t, http.StatusServiceUnavailable, "unavailable")
	e.do(t, "GET", "/v1/runs/"+run.RunID+"/stream", "", nil).wantCode(t, http.StatusUnauthorized, "unauthorized")
}

func TestStreamsAreInTheOpenAPIDocument(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.do(t, "GET", "/openapi.json", "", nil).want(t, http.StatusOK)
	var doc struct {
		Paths map[string]map[string]struct {
			OperationID string `json:"operationId"`
			Responses   map[string]struct {
				Content map[string]json.RawMessage `json:"content"`
			} `json:"responses"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(r.raw, &doc); err != nil {
		t.Fatal(err)
	}
	for path, id := range map[string]string{"/v1/runs/{runId}/stream": "streamRun", "/v1/sessions/{platformSessionId}/stream": "streamSession"} {
		op := doc.Paths[path]["get"]
		if op.OperationID != id || op.Responses["200"].Content["text/event-stream"] == nil {
			t.Errorf("%s: operation %q, 200 content %v", path, op.OperationID, op.Responses["200"].Content)
		}
	}
	e.do(t, "GET", "/openapi-3.0.json", "", nil).want(t, http.StatusOK)
}
