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
	"github.com/xbot-runtime/xbot/services/api/client"
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
	api    *api.API
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
	srv := httptest.NewServer(checkDeclared(t, a, a.Handler(), nil))
	t.Cleanup(srv.Close)
	return &env{api: a, srv: srv, store: store, sender: sender, logs: logs}
}

// response is an answer of the API under test, read whole.
type response struct {
	status int
	header http.Header
	raw    []byte
}

// problem is an error answer as the tests read it: the client's Problem and
// the validation details.
type problem struct {
	client.Problem
	Errors []struct {
		Location string `json:"location"`
		Message  string `json:"message"`
	} `json:"errors"`
}

// apiAs is a client of the API under test that sends token.
func (e *env) apiAs(t *testing.T, token string) *client.Client {
	t.Helper()
	c, err := client.New(client.Config{BaseURL: e.srv.URL, Token: token, HTTP: e.srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// do sends a request through the client's raw layer (body as
// client.NewRequest takes it; headers are name, value pairs); a JSON answer
// must be an object and every error answer a problem with a code.
func (e *env) do(t *testing.T, method, path, token string, body any, headers ...string) response {
	t.Helper()
	return e.doCtx(context.Background(), t, method, path, token, body, headers...)
}

// doCtx is do under ctx: a request not answered before ctx ends fails t.
func (e *env) doCtx(ctx context.Context, t *testing.T, method, path, token string, body any, headers ...string) response {
	t.Helper()
	res, err := e.apiAs(t, token).Send(ctx, method, path, body, headers...)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	r := response{status: res.StatusCode, header: res.Header}
	if r.raw, err = io.ReadAll(res.Body); err != nil {
		t.Fatal(err)
	}
	if obj := bytes.TrimSpace(r.raw); strings.Contains(res.Header.Get("Content-Type"), "json") &&
		(!json.Valid(obj) || len(obj) == 0 || obj[0] != '{') {
		t.Fatalf("%s %s: body is not a JSON object:\n%s", method, path, r.raw)
	}
	if r.status >= 400 {
		checkProblem(t, method+" "+path, r)
	}
	return r
}

// decode reads an answer's body as a T.
func decode[T any](t *testing.T, r response) T {
	t.Helper()
	var out T
	if err := json.Unmarshal(r.raw, &out); err != nil {
		t.Fatalf("answer %s is not a %T: %v", r.raw, out, err)
	}
	return out
}

func (r response) problem(t *testing.T) problem {
	t.Helper()
	return decode[problem](t, r)
}

func checkProblem(t *testing.T, what string, r response) {
	t.Helper()
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/problem+json") {
		t.Errorf("%s: status %d content-type %q, want application/problem+json", what, r.status, ct)
	}
	p := r.problem(t)
	if p.Code == "" {
		t.Errorf("%s: problem without code: %s", what, r.raw)
	}
	if p.Status != r.status {
		t.Errorf("%s: problem status %d, response status %d", what, p.Status, r.status)
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
	if got := r.problem(t).Code; got != code {
		t.Fatalf("code %q, want %s: %s", got, code, r.raw)
	}
	return r
}

// wantLocation fails unless an error detail is at loc.
func (r response) wantLocation(t *testing.T, loc string) {
	t.Helper()
	for _, d := range r.problem(t).Errors {
		if d.Location == loc {
			return
		}
	}
	t.Fatalf("no error detail at %s: %s", loc, r.raw)
}

// command is a command endpoint's answer.
func (r response) command(t *testing.T) client.CommandResult {
	t.Helper()
	return decode[client.CommandResult](t, r)
}

func createBody(content string) client.CreateRunRequest {
	return client.CreateRunRequest{AgentID: "coder", Input: client.UserInput{Content: content}}
}
