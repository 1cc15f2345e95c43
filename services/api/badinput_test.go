package api_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/projections/postgres/postgrestest"
	"github.com/xbot-runtime/xbot/projections/uistream"
	"github.com/xbot-runtime/xbot/services/api"
	"github.com/xbot-runtime/xbot/services/api/client"
	"github.com/xbot-runtime/xbot/services/stack"
)

// badStrings are values a hostile client sends where an id, a cursor or a
// text goes: NUL, invalid UTF-8, lone surrogates, overlong, odd syntax, and
// cursors that decode to NUL.
var badStrings = []string{
	"\x00", "a\x00b", "\xff\xfe", "\xc3\x28", "\xed\xa0\x80", strings.Repeat("x", 5000), "-1",
	"99999999999999999999999", "1e309", "%", "../../etc", " ", "run_\x00",
	b64(`{"k":"item","s":1,"r":"\u0000","i":"\u0000"}`), b64(`{"k":"approval","t":1,"r":"\u0000","i":"x"}`),
	b64(`{"c":1,"r":"\u0000"}`), b64("\xff\xfe"), "!!notbase64",
}

// badJSON are values put into body fields: wrong types, huge numbers,
// escaped NUL and lone surrogates, as raw JSON.
var badJSON = []string{`"\u0000"`, `"a\u0000"`, `"\ud800"`, `"\udc00x"`, `1e400`, `-1`, `123`, `[]`, `{}`, `null`,
	`true`, `"` + strings.Repeat("y", 5000) + `"`}

// badBodies are whole bodies.
var badBodies = []string{`{"`, `[]`, `null`, "{\"agentId\":\"\xff\"}", "{\"a\":\"\x00\"}", `{"a":"\u0000"}`,
	`{"a":"\ud83d"}`, `"x"`, strings.Repeat("[", 10000)}

func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

// TestBadInputSweep reads the served OpenAPI document and sends bad values
// into every path, query and header parameter and every body field of
// every operation: nothing answers 5xx, every 4xx is a problem with a code,
// and every status is one the operation declares (checkDeclared).
func TestBadInputSweep(t *testing.T) {
	t.Parallel()
	srv := newSweepServer(t)
	doc := fetchOpenAPI(t, srv)
	paths, _ := doc["paths"].(map[string]any)
	n := 0
	for _, path := range sortedKeys(paths) {
		ops, _ := paths[path].(map[string]any)
		for _, method := range sortedKeys(ops) {
			op, _ := ops[method].(map[string]any)
			for _, req := range sweepRequests(doc, strings.ToUpper(method), path, op) {
				n++
				checkNo5xx(t, srv, req)
			}
		}
	}
	t.Logf("%d requests", n)
}

// sweepReq is one request of the sweep.
type sweepReq struct {
	method, path string
	query        url.Values
	header       http.Header
	body         []byte
	what         string
}

func sweepRequests(doc map[string]any, method, path string, op map[string]any) []sweepReq {
	params, _ := op["parameters"].([]any)
	base := sweepReq{method: method, path: path, query: url.Values{}, header: http.Header{}}
	var out []sweepReq
	for _, p := range params {
		pm, _ := p.(map[string]any)
		name, in := pm["name"].(string), pm["in"].(string)
		for _, v := range badStrings {
			r := base.clone()
			r.what = fmt.Sprintf("%s.%s=%q", in, name, trim(v))
			switch in {
			case "path":
				r.path = strings.ReplaceAll(r.path, "{"+name+"}", url.PathEscape(v))
			case "query":
				r.query.Set(name, v)
			case "header":
				r.header.Set(name, v)
			}
			out = append(out, r)
		}
	}
	body := requestSchema(doc, op)
	if body == nil {
		return out
	}
	for _, b := range badBodies {
		r := base.clone()
		r.body, r.what = []byte(b), fmt.Sprintf("body %q", trim(b))
		out = append(out, r)
	}
	for _, field := range fieldPaths(doc, body, "") {
		for _, v := range badJSON {
			r := base.clone()
			r.body = []byte(setField(doc, body, field, v))
			r.what = fmt.Sprintf("body.%s=%s", field, trim(v))
			out = append(out, r)
		}
	}
	return out
}

func (r sweepReq) clone() sweepReq {
	c := r
	c.query, c.header = url.Values{}, r.header.Clone()
	for k, v := range r.query {
		c.query[k] = append([]string(nil), v...)
	}
	return c
}

func trim(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// checkNo5xx sends r with a valid token; an answer must be below 500, and
// an error answer a problem with a code. A stream that opens is closed.
func checkNo5xx(t *testing.T, srv *httptest.Server, r sweepReq) {
	t.Helper()
	path := strings.NewReplacer("{runId}", "run_sweep", "{commandId}", "cmd_sweep",
		"{platformSessionId}", "sess-sweep").Replace(r.path)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	api := sweepClient(t, srv)
	req, err := api.NewRequest(ctx, r.method, path+"?"+r.query.Encode(), r.body)
	if err != nil {
		return // a value the client cannot even put on the wire
	}
	for k, v := range r.header { // the probe's headers, but its own token and JSON content
		if k != "Authorization" && k != "Content-Type" {
			req.Header[k] = v
		}
	}
	res, err := api.Do(req)
	if err != nil {
		return // refused by the client (header values) or the connection
	}
	defer res.Body.Close()
	if res.StatusCode == http.StatusOK && strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		return
	}
	raw, _ := io.ReadAll(res.Body)
	if res.StatusCode >= 500 {
		t.Errorf("%s %s %s: %d %s", r.method, r.path, r.what, res.StatusCode, raw)
		return
	}
	if res.StatusCode >= 400 {
		var p struct{ Code string }
		if !strings.HasPrefix(res.Header.Get("Content-Type"), "application/problem+json") ||
			json.Unmarshal(raw, &p) != nil || p.Code == "" {
			t.Errorf("%s %s %s: %d is not a problem with a code: %s", r.method, r.path, r.what, res.StatusCode, raw)
		}
	}
}

// newSweepServer is the API over a real, migrated Postgres (whose
// encoding errors are what bad input used to reach) with streams on.
func newSweepServer(t *testing.T) *httptest.Server {
	t.Helper()
	store, _ := postgrestest.New(t)
	// A short wait cap: commands that pass validation are queued on the fake
	// sender and answered pending.
	// Streams of runs that do not exist wait a short time for them.
	cfg := api.Config{Tokens: map[string]string{tokenA: tenantA}, WaitDefault: time.Millisecond, WaitMax: 10 * time.Millisecond,
		StreamAppearWait: 10 * time.Millisecond}
	a, err := api.New(cfg, stack.APIStore(store.Queries), &fakeSender{}, nil, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	hub, err := uistream.NewHub(uistream.HubConfig{Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(hub.Close)
	if err := a.EnableStreams(hub, stack.APIStore(store.Queries), uistream.StreamConfig{}); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(checkDeclared(t, a, a.Handler(), nil))
	t.Cleanup(srv.Close)
	return srv
}

// sweepClient is a client of the sweep's server with tenant A's token.
func sweepClient(t *testing.T, srv *httptest.Server) *client.Client {
	t.Helper()
	c, err := client.New(client.Config{BaseURL: srv.URL, Token: tokenA, HTTP: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// fetchOpenAPI reads the served document as generic JSON: the sweep walks
// whatever operations and schemas it holds.
func fetchOpenAPI(t *testing.T, srv *httptest.Server) map[string]any {
	t.Helper()
	res, err := sweepClient(t, srv).Send(context.Background(), http.MethodGet, "/openapi.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var doc map[string]any
	if err := json.NewDecoder(res.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

func sortedKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestBodiesThatAreNotTextAreRefused: invalid UTF-8, NUL (raw or escaped)
// and lone surrogate escapes in a body are refused with 422
// invalid_encoding and nothing is queued, instead of being rewritten to
// U+FFFD or reaching a query; an escaped backslash before "u0000" is text.
func TestBodiesThatAreNotTextAreRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for name, body := range map[string]string{
		"invalid UTF-8":             "{\"agentId\":\"demo\",\"input\":{\"content\":\"hi \xff\"}}",
		"raw NUL":                   "{\"agentId\":\"demo\",\"input\":{\"content\":\"hi \x00\"}}",
		"escaped NUL":               `{"agentId":"demo","input":{"content":"hi \u0000"}}`,
		"lone surrogate":            `{"agentId":"demo","input":{"content":"hi \ud800"}}`,
		"NUL session id":            `{"agentId":"demo","input":{"content":"hi"},"platformSessionId":"\u0000"}`,
		"NUL in a key":              `{"agentId":"demo","input":{"content":"hi"},"metadata":{"\u0000":"v"}}`,
		"trailing high surrogate":   `{"agentId":"demo","input":{"content":"\ud83d"}}`,
		"low surrogate before high": `{"agentId":"demo","input":{"content":"\ude00\ud83d"}}`,
	} {
		e.do(t, "POST", "/v1/runs", tokenA, body).wantCode(t, http.StatusUnprocessableEntity, "invalid_encoding")
		if n := len(e.sender.envelopes()); n != 0 {
			t.Fatalf("%s: %d commands queued", name, n)
		}
	}
	e.do(t, "POST", "/v1/runs", tokenA, `{"agentId":"demo","input":{"content":"a \\u0000 and \ud83d\ude00"}}`).
		want(t, http.StatusAccepted)
	p, _ := e.sender.envelopes()[0].DecodePayload()
	if got := p.(*commands.CreateRunPayload).Input.Content; got != `a \u0000 and 😀` {
		t.Fatalf("content %q", got)
	}
}
