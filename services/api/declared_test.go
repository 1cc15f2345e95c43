package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/services/api"
)

// Every answer of an operation must have a status its operation declares in
// the document. checkDeclared holds every API test of this package to it:
// each env's server is wrapped in it.

// declaredStatuses maps each operation of doc, by route ("GET
// /v1/runs/{runId}"), to the statuses its responses declare.
func declaredStatuses(doc map[string]any) map[string]map[int]bool {
	out := map[string]map[int]bool{}
	paths, _ := doc["paths"].(map[string]any)
	for path, item := range paths {
		ops, _ := item.(map[string]any)
		for method, o := range ops {
			op, _ := o.(map[string]any)
			responses, _ := op["responses"].(map[string]any)
			if responses == nil {
				continue
			}
			set := map[int]bool{}
			for status := range responses {
				if n, err := strconv.Atoi(status); err == nil {
					set[n] = true
				}
			}
			out[strings.ToUpper(method)+" "+path] = set
		}
	}
	return out
}

// documentOf is a's OpenAPI document as generic JSON.
func documentOf(t testing.TB, a *api.API) map[string]any {
	t.Helper()
	b, err := json.Marshal(a.OpenAPI())
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// checkDeclared wraps h: an answer to a route of the document whose status
// its operation does not declare fails t. Routes outside the document (an
// unknown path, the document itself) are not checked. seen, when not nil,
// gets every route's statuses.
func checkDeclared(t testing.TB, a *api.API, h http.Handler, seen func(route string, status int)) http.Handler {
	declared := declaredStatuses(documentOf(t, a))
	routes := http.NewServeMux()
	for route := range declared {
		routes.HandleFunc(route, func(http.ResponseWriter, *http.Request) {})
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, route := routes.Handler(r)
		rec := &firstStatus{ResponseWriter: w}
		h.ServeHTTP(rec, r)
		if route == "" || declared[route] == nil {
			return
		}
		status := rec.status
		if status == 0 {
			status = http.StatusOK
		}
		if seen != nil {
			seen(route, status)
		}
		if !declared[route][status] {
			t.Errorf("%s (%s %s) answered %d, which its operation does not declare", route, r.Method, r.URL, status)
		}
	})
}

// firstStatus records the status of an answer.
type firstStatus struct {
	http.ResponseWriter
	status int
}

func (f *firstStatus) WriteHeader(code int) {
	if f.status == 0 {
		f.status = code
	}
	f.ResponseWriter.WriteHeader(code)
}

func (f *firstStatus) Write(p []byte) (int, error) {
	if f.status == 0 {
		f.status = http.StatusOK
	}
	return f.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach the connection (streams flush).
func (f *firstStatus) Unwrap() http.ResponseWriter { return f.ResponseWriter }

// panickyStore is a store whose GetRun panics.
type panickyStore struct{ *fakeStore }

func (panickyStore) GetRun(context.Context, string, string) (api.RunRecord, error) {
	panic("the read model's driver panicked")
}

// TestAPanickingHandlerIsAnswered500: a handler that panics is answered 500
// internal, a problem without the panic's text, which is why every operation
// declares 500.
func TestAPanickingHandlerIsAnswered500(t *testing.T) {
	t.Parallel()
	store := newFakeStore()
	a, err := api.New(api.Config{Tokens: map[string]string{tokenA: tenantA}}, panickyStore{store},
		&fakeSender{store: store}, nil, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(checkDeclared(t, a, a.Handler(), nil))
	t.Cleanup(srv.Close)
	e := &env{api: a, srv: srv, store: store}
	r := e.do(t, "GET", "/v1/runs/run_1", tokenA, nil).wantCode(t, http.StatusInternalServerError, "internal")
	if strings.Contains(string(r.raw), "panicked") {
		t.Errorf("the answer has the panic's text: %s", r.raw)
	}
}

// TestDocumentIsWhatTheAPIServes: api.Document (what xbot openapi prints
// and clients are generated from) is, byte for byte, what a running API
// serves, both versions.
func TestDocumentIsWhatTheAPIServes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withConfig(func(c *api.Config) { c.Version = "1.2.3" }))
	for spec, path := range map[api.Spec]string{api.OpenAPI31: "/openapi.json", api.OpenAPI30: "/openapi-3.0.json"} {
		doc, err := api.Document(spec, "1.2.3")
		if err != nil {
			t.Fatal(err)
		}
		if served := e.do(t, "GET", path, "", nil).want(t, http.StatusOK).raw; string(served) != string(doc) {
			t.Errorf("api.Document(%s) differs from what %s serves", spec, path)
		}
	}
	if _, err := api.Document("2.0", "x"); err == nil {
		t.Error("api.Document accepted a version it does not serve")
	}
}
