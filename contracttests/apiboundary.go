package contracttests

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/services/api/client"
)

// APITarget is a running xbot API that APIBoundary probes.
type APITarget struct {
	// BaseURL is the API's base URL, e.g. http://127.0.0.1:8080.
	BaseURL string
	// FullToken is a bearer token with scope full and without act_as.
	FullToken string
	// ReadToken is a bearer token of the same tenant with scope read (or
	// demo) only.
	ReadToken string
	// AgentID is an agent the API accepts runs for.
	AgentID string
	// Client sends the requests; default a client with a 30 s timeout.
	Client *http.Client
}

// APIBoundary checks what the API guarantees about who the caller is and
// what input it takes, against a live server: a read-only token may read but
// not command; a command's actor and sandbox owner come from the credential,
// never from the request; bad text and bad ids are refused with a 4xx and a
// stable code, never a 5xx and never rewritten; an idempotency key cannot be
// reused for another request; links in answers do not come from the Host
// header. The cases create at most a few runs of target.AgentID.
func APIBoundary(t *testing.T, target APITarget) {
	if target.Client == nil {
		target.Client = &http.Client{Timeout: 30 * time.Second}
	}
	c := apiProbe{t: t, APITarget: target}
	t.Run("ReadOnlyTokenReadsButCannotCommand", c.readOnly)
	t.Run("ActorAndOwnerComeFromTheCredential", c.actorAndOwner)
	t.Run("BadTextIsRefusedNotRewritten", c.badText)
	t.Run("BadIDsAnswer4xxNever5xx", c.badIDs)
	t.Run("IdempotencyKeyCannotBeReused", c.keyReused)
	t.Run("LinksDoNotComeFromTheHostHeader", c.hostHeader)
}

type apiProbe struct {
	t *testing.T
	APITarget
}

// answer is a response with its problem code, when it is a problem.
type answer struct {
	status int
	code   string
	body   string
}

// do sends a request through the typed client's raw layer (its bearer
// token and JSON content type); a "Host" entry of hdr sets the request's
// host.
func (c apiProbe) do(t *testing.T, method, path, token string, body []byte, hdr map[string]string) answer {
	t.Helper()
	api, err := client.New(client.Config{BaseURL: c.BaseURL, Token: token, HTTP: c.Client})
	if err != nil {
		t.Fatal(err)
	}
	var b any
	if body != nil {
		b = body
	}
	req, err := api.NewRequest(t.Context(), method, path, b)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		if strings.EqualFold(k, "Host") {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := api.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		t.Fatalf("%s %s: read: %v", method, path, err)
	}
	a := answer{status: resp.StatusCode, body: string(data)}
	var p client.Problem
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/problem+json") && json.Unmarshal(data, &p) == nil {
		a.code = p.Code
	}
	return a
}

// expect fails unless a has status and, when code is set, that problem code.
func expect(t *testing.T, what string, a answer, status int, code string) {
	t.Helper()
	if a.status != status || (code != "" && a.code != code) {
		t.Errorf("%s: HTTP %d code %q, want %d %q: %s", what, a.status, a.code, status, code, truncate(a.body))
	}
}

func truncate(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

func (c apiProbe) createBody(extra string) []byte {
	return []byte(fmt.Sprintf(`{"agentId":%q,"input":{"content":"boundary probe"}%s}`, c.AgentID, extra))
}

func uniqueKey(prefix string) string {
	return fmt.Sprintf("%s-%d", prefix, time.Now().UnixNano())
}

func (c apiProbe) readOnly(t *testing.T) {
	expect(t, "GET /v1/runs with the read-only token", c.do(t, "GET", "/v1/runs?limit=1", c.ReadToken, nil, nil), 200, "")
	for _, p := range []struct{ path, body string }{
		{"/v1/runs?wait=0", string(c.createBody(""))},
		{"/v1/runs/run_00000000000000000000000000/cancel?wait=0", `{"reason":"probe"}`},
		{"/v1/runs/run_00000000000000000000000000/inputs?wait=0", `{"intent":"steer","content":"probe"}`},
		{"/v1/runs/run_00000000000000000000000000/compact?wait=0", `{}`},
	} {
		a := c.do(t, "POST", p.path, c.ReadToken, []byte(p.body), map[string]string{"Idempotency-Key": uniqueKey("ro")})
		expect(t, "POST "+p.path+" with the read-only token", a, 403, "forbidden_scope")
	}
}

func (c apiProbe) actorAndOwner(t *testing.T) {
	hdr := map[string]string{"Idempotency-Key": uniqueKey("actor"), "X-Actor-Id": "someone-else.probe"}
	expect(t, "create with a forged X-Actor-Id", c.do(t, "POST", "/v1/runs?wait=0", c.FullToken, c.createBody(""), hdr),
		403, "forbidden_scope")
	owner := `,"sandboxKey":{"ownerId":"someone-else.probe"}`
	a := c.do(t, "POST", "/v1/runs?wait=0", c.FullToken, c.createBody(owner), map[string]string{"Idempotency-Key": uniqueKey("owner")})
	expect(t, "create for another sandbox owner without act_as", a, 403, "forbidden_scope")
}

func (c apiProbe) badText(t *testing.T) {
	raw := func(content string) []byte { // content goes in unescaped
		return []byte(`{"agentId":"` + c.AgentID + `","input":{"content":"` + content + `"}}`)
	}
	for name, body := range map[string][]byte{
		"invalid UTF-8":   raw("boundary \xff\xfe probe"),
		"raw NUL":         raw("boundary \x00 probe"),
		"escaped NUL":     raw(`boundary \u0000 probe`),
		"lone surrogate":  raw(`boundary \ud800 probe`),
		"NUL session id":  c.createBody(`,"platformSessionId":"\u0000"`),
		"NUL in metadata": c.createBody(`,"metadata":{"k":"a\u0000b"}`),
	} {
		a := c.do(t, "POST", "/v1/runs?wait=0", c.FullToken, body, map[string]string{"Idempotency-Key": uniqueKey("text")})
		expect(t, "create with "+name, a, 422, "invalid_encoding")
	}
}

func (c apiProbe) badIDs(t *testing.T) {
	for _, raw := range []string{"\x00", "\xff\xfe", "run_\x00x", strings.Repeat("r", 400), "a b", "../x"} {
		id := url.PathEscape(raw)
		q := url.QueryEscape(raw)
		for _, path := range []string{
			"/v1/runs/" + id, "/v1/runs/" + id + "/events", "/v1/runs/" + id + "/items", "/v1/commands/" + id,
			"/v1/sessions/" + id + "/runs", "/v1/runs?platformSessionId=" + q, "/v1/approvals?runId=" + q,
			"/v1/runs?cursor=" + q, "/v1/runs/" + id + "/stream", "/v1/sessions/" + id + "/state",
		} {
			a := c.do(t, "GET", path, c.FullToken, nil, nil)
			if a.status < 400 || a.status >= 500 || a.code == "" {
				t.Errorf("GET %q: HTTP %d code %q, want a 4xx problem with a code: %s", path, a.status, a.code, truncate(a.body))
			}
		}
	}
}

func (c apiProbe) keyReused(t *testing.T) {
	key := uniqueKey("reuse")
	hdr := map[string]string{"Idempotency-Key": key}
	first := c.do(t, "POST", "/v1/runs", c.FullToken, c.createBody(""), hdr)
	if first.status != 202 {
		t.Fatalf("first create: HTTP %d: %s", first.status, truncate(first.body))
	}
	again := c.do(t, "POST", "/v1/runs", c.FullToken, c.createBody(""), hdr)
	if again.status != 202 || !strings.Contains(again.body, `"duplicate"`) {
		t.Errorf("the same request again: HTTP %d, want 202 duplicate: %s", again.status, truncate(again.body))
	}
	other := c.do(t, "POST", "/v1/runs", c.FullToken, c.createBody(`,"metadata":{"changed":"yes"}`), hdr)
	expect(t, "another request under the same key", other, 422, "idempotency_key_reused")
	// Another sandbox key makes another run id, on another partition: the
	// key still stands for the first request.
	elsewhere := c.do(t, "POST", "/v1/runs", c.FullToken, c.createBody(`,"sandboxKey":{"workspaceId":"elsewhere"}`), hdr)
	expect(t, "another sandbox key under the same key", elsewhere, 422, "idempotency_key_reused")
}

func (c apiProbe) hostHeader(t *testing.T) {
	const forged = "attacker.example"
	hdr := map[string]string{"Host": forged, "X-Forwarded-Host": forged, "Forwarded": "host=" + forged}
	a := c.do(t, "GET", "/v1/runs/run_00000000000000000000000000", c.FullToken, nil, hdr)
	if a.status != 404 {
		t.Fatalf("GET an unknown run: HTTP %d: %s", a.status, truncate(a.body))
	}
	if strings.Contains(a.body, forged) {
		t.Errorf("the answer links to the Host header's name: %s", truncate(a.body))
	}
}
