package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/services/api"
)

func TestAuthRequired(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, c := range []struct{ name, header string }{
		{"none", ""}, {"unknown token", "Bearer nope"}, {"wrong scheme", "Basic " + tokenA}, {"empty bearer", "Bearer "},
	} {
		t.Run(c.name, func(t *testing.T) {
			var hs []string
			if c.header != "" {
				hs = []string{"Authorization", c.header}
			}
			r := e.do(t, "GET", "/v1/runs", "", nil, hs...).wantCode(t, http.StatusUnauthorized, "unauthorized")
			if !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer") {
				t.Fatalf("WWW-Authenticate %q", r.header.Get("WWW-Authenticate"))
			}
		})
	}
	e.do(t, "POST", "/v1/runs", "", createBody("hi")).wantCode(t, http.StatusUnauthorized, "unauthorized")
	e.do(t, "GET", "/v1/runs", "", nil, "Authorization", "bearer "+tokenA).want(t, http.StatusOK)
	if n := len(e.sender.envelopes()); n != 0 {
		t.Fatalf("unauthenticated create sent %d commands", n)
	}
}

func TestHealthz(t *testing.T) {
	t.Parallel()
	ok := api.HealthCheck{Name: "postgres", Check: func(context.Context) error { return nil }}
	down := api.HealthCheck{Name: "kafka", Check: func(context.Context) error { return errors.New("dial tcp: connection refused") }}

	// The answer, healthy or a problem, with each check's result; status is
	// "ok" when healthy and the HTTP status in a problem.
	type health struct {
		Status any               `json:"status"`
		Detail string            `json:"detail"`
		Checks map[string]string `json:"checks"`
	}
	r := newEnv(t, withHealth(ok)).do(t, "GET", "/healthz", "", nil).want(t, http.StatusOK)
	if h := decode[health](t, r); h.Status != "ok" || h.Checks["postgres"] != "ok" {
		t.Fatalf("healthy answer %s", r.raw)
	}

	r = newEnv(t, withHealth(ok, down)).do(t, "GET", "/healthz", "", nil).wantCode(t, http.StatusServiceUnavailable, "unavailable")
	if h := decode[health](t, r); h.Checks["postgres"] != "ok" || h.Checks["kafka"] != "dial tcp: connection refused" || !strings.Contains(h.Detail, "kafka") {
		t.Fatalf("unhealthy answer %s", r.raw)
	}
}

func TestUnknownRouteIsProblem(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.do(t, "GET", "/v2/nothing", tokenA, nil).wantCode(t, http.StatusNotFound, "not_found")
	e.do(t, "DELETE", "/v1/runs", tokenA, nil).wantCode(t, http.StatusNotFound, "not_found")
}

func TestOpenAPIDocument(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.do(t, "GET", "/openapi.json", "", nil).want(t, http.StatusOK)
	var doc struct {
		OpenAPI string `json:"openapi"`
		Paths   map[string]map[string]struct {
			OperationID string `json:"operationId"`
		} `json:"paths"`
		Components struct {
			SecuritySchemes map[string]struct {
				Scheme string `json:"scheme"`
			} `json:"securitySchemes"`
		} `json:"components"`
	}
	if err := json.Unmarshal(r.raw, &doc); err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.1.") || doc.Components.SecuritySchemes["bearer"].Scheme != "bearer" {
		t.Fatalf("openapi %q, security schemes %v", doc.OpenAPI, doc.Components.SecuritySchemes)
	}
	ids := map[string]bool{}
	for _, ops := range doc.Paths {
		for _, op := range ops {
			if op.OperationID != "" {
				ids[op.OperationID] = true
			}
		}
	}
	for _, id := range []string{"createRun", "cancelRun", "appendUserInput", "getRun", "listRuns", "listRunEvents", "getCommand", "getHealth"} {
		if !ids[id] {
			t.Errorf("operationId %s missing (have %v)", id, ids)
		}
	}
	r = e.do(t, "GET", "/openapi-3.0.json", "", nil).want(t, http.StatusOK)
	if v := decode[struct{ OpenAPI string }](t, r).OpenAPI; !strings.HasPrefix(v, "3.0.") {
		t.Errorf("openapi-3.0.json version %q", v)
	}
	e.do(t, "GET", "/docs", "", nil).want(t, http.StatusOK)
}

func TestRequestLogNeverHasToken(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	run := seedRun(e, tenantA, "running")
	e.do(t, "GET", "/v1/runs/"+run.RunID, tokenA, nil).want(t, http.StatusOK)
	e.do(t, "GET", "/v1/runs", "", nil, "Authorization", "Bearer leaked-token").want(t, http.StatusUnauthorized)
	entries := e.logs.FilterMessage("http request").All()
	if len(entries) != 2 {
		t.Fatalf("%d request log lines, want 2", len(entries))
	}
	f := entries[0].ContextMap()
	if f["status"] != int64(200) || f["tenant_id"] != tenantA || f["run_id"] != run.RunID || f["method"] != "GET" {
		t.Fatalf("log fields %v", f)
	}
	for _, en := range e.logs.All() {
		b, _ := json.Marshal(en.ContextMap())
		if strings.Contains(string(b)+en.Message, "token") {
			t.Fatalf("log line has a token: %s %s", en.Message, b)
		}
	}
}

func TestNewChecksConfigAndDeps(t *testing.T) {
	t.Parallel()
	store, sender := newFakeStore(), &fakeSender{}
	if _, err := api.New(api.Config{}, store, sender, nil, zap.NewNop()); err == nil {
		t.Error("New accepted a config without tokens")
	}
	bad := api.Config{Tokens: map[string]string{"t": "bad tenant"}, WaitDefault: 2 * api.DefaultWaitMax}
	if _, err := api.New(bad, store, sender, nil, zap.NewNop()); err == nil || strings.Contains(err.Error(), `"t"`) {
		t.Errorf("New: %v", err)
	}
	defer func() {
		if recover() == nil {
			t.Error("New did not panic on a nil store")
		}
	}()
	_, _ = api.New(api.Config{Tokens: map[string]string{"t": "a"}}, nil, sender, nil, zap.NewNop())
}
