package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/xbot-runtime/xbot/services/api"
)

const (
	tokenA = "secret-token-a"
	tokenB = "secret-token-b"
	// tokenAlice is alice's token in tenant A.
	tokenAlice = "secret-token-alice"
	tenantA    = "tenant-a"
	tenantB    = "tenant-b"
)

type env struct {
	srv    *httptest.Server
	store  *fakeStore
	sender *fakeSender
	logs   *observer.ObservedLogs
}

type option func(*api.Config, *[]api.HealthCheck)

func withHealth(h ...api.HealthCheck) option {
	return func(_ *api.Config, hs *[]api.HealthCheck) { *hs = h }
}

func withConfig(f func(*api.Config)) option {
	return func(c *api.Config, _ *[]api.HealthCheck) { f(c) }
}

func newEnv(t *testing.T, opts ...option) *env {
	t.Helper()
	store := newFakeStore()
	sender := &fakeSender{store: store, executor: true, firsts: map[string]string{}}
	cfg := api.Config{Tokens: map[string]string{tokenA: tenantA, tokenB: tenantB, tokenAlice: tenantA + "/alice"},
		WaitDefault: 5 * time.Second}
	var health []api.HealthCheck
	for _, o := range opts {
		o(&cfg, &health)
	}
	core, logs := observer.New(zap.DebugLevel)
	a, err := api.New(cfg, store, sender, health, zap.New(core))
	if err != nil {
		t.Fatalf("api.New: %v", err)
	}
	srv := httptest.NewServer(a.Handler())
	t.Cleanup(srv.Close)
	return &env{srv: srv, store: store, sender: sender, logs: logs}
}

type response struct {
	status int
	header http.Header
	body   map[string]any
	raw    []byte
}

// do sends a request; every error response must be a problem with a code.
func (e *env) do(t *testing.T, method, path, token string, body any, headers ...string) response {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), method, e.srv.URL+path, bodyReader(t, body))
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := e.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	r := response{status: res.StatusCode, header: res.Header}
	if r.raw, err = io.ReadAll(res.Body); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(res.Header.Get("Content-Type"), "json") {
		if err := json.Unmarshal(r.raw, &r.body); err != nil {
			t.Fatalf("%s %s: body is not a JSON object: %v\n%s", method, path, err, r.raw)
		}
	}
	if r.status >= 400 {
		checkProblem(t, method+" "+path, r)
	}
	return r
}

// bodyReader sends a string as is and anything else as JSON.
func bodyReader(t *testing.T, body any) io.Reader {
	t.Helper()
	switch b := body.(type) {
	case nil:
		return nil
	case string:
		return strings.NewReader(b)
	}
	raw, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.NewReader(raw)
}

func checkProblem(t *testing.T, what string, r response) {
	t.Helper()
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/problem+json") {
		t.Errorf("%s: status %d content-type %q, want application/problem+json", what, r.status, ct)
	}
	if code, _ := r.body["code"].(string); code == "" {
		t.Errorf("%s: problem without code: %s", what, r.raw)
	}
	if st, _ := r.body["status"].(float64); int(st) != r.status {
		t.Errorf("%s: problem status %v, response status %d", what, r.body["status"], r.status)
	}
}

func (r response) want(t *testing.T, status int) response {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.raw)
	}
	return r
}

func (r response) wantCode(t *testing.T, status int, code string) response {
	t.Helper()
	r.want(t, status)
	if r.body["code"] != code {
		t.Fatalf("code %v, want %s: %s", r.body["code"], code, r.raw)
	}
	return r
}

// wantLocation fails unless an error detail is at loc.
func (r response) wantLocation(t *testing.T, loc string) {
	t.Helper()
	errs, _ := r.body["errors"].([]any)
	for _, e := range errs {
		if d, _ := e.(map[string]any); d["location"] == loc {
			return
		}
	}
	t.Fatalf("no error detail at %s: %s", loc, r.raw)
}

func (r response) str(key string) string {
	s, _ := r.body[key].(string)
	return s
}

func createBody(content string) map[string]any {
	return map[string]any{"agentId": "coder", "input": map[string]any{"content": content}}
}
