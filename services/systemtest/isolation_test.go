package systemtest_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/services/api/client"
	"github.com/xbot-runtime/xbot/services/engine/policy"
	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/stack"
)

// The tenant-isolation sweep: every operation of the served OpenAPI document
// is probed with another tenant's token, with no token and with bad bodies.
// An operation the sweep has no case for fails the test, so a new route
// cannot ship without one; every answer must have a status the operation
// declares.

const otherToken = "tok-other"

// tenantA is tenant acme's data the sweep probes.
type tenantA struct {
	done, paused, next, session, commandID string
	// grant is a platform_session grant given in session.
	grant string
	// secrets must never appear in an answer to another tenant.
	secrets []string
}

// sweepCase is one operation's probe against tenant A's data.
type sweepCase struct {
	path string   // the operation's path with A's ids filled in
	body string   // a valid JSON body, for operations that take one
	hdr  []string // headers every probe sends (name, value pairs)
	// status and code answer another tenant's token.
	status int
	code   string
}

func sweepCases(a tenantA) map[string]sweepCase {
	const steer = `{"intent":"steer","content":"probe from another tenant"}`
	nf := func(path, code string) sweepCase { return sweepCase{path: path, status: 404, code: code} }
	cases := map[string]sweepCase{
		// A create lands on the caller's own run even with A's idempotency key
		// and A's very request (the owner's answer is A's run, a duplicate).
		"POST /v1/runs": {path: "/v1/runs?wait=0", status: 202,
			body: `{"agentId":"asker","input":{"content":"paint the acme door"},"idempotencyKey":"iso-paused"}`},
		"GET /v1/runs":      {path: "/v1/runs?platformSessionId=" + a.session, status: 200},
		"GET /v1/approvals": {path: "/v1/approvals?runId=" + a.paused, status: 200},
		"GET /healthz":      {path: "/healthz", status: 200},
		// Projector lag is system-wide and documented to hold no tenant data.
		"GET /v1/system/projectors":      {path: "/v1/system/projectors", status: 200},
		"GET /v1/system/policy/builtins": {path: "/v1/system/policy/builtins", status: 200},

		"GET /v1/runs/{runId}":                      nf("/v1/runs/"+a.paused, "run_not_found"),
		"GET /v1/runs/{runId}/events":               nf("/v1/runs/"+a.done+"/events", "run_not_found"),
		"GET /v1/runs/{runId}/items":                nf("/v1/runs/"+a.paused+"/items", "run_not_found"),
		"GET /v1/commands/{commandId}":              nf("/v1/commands/"+a.commandID, "command_not_found"),
		"GET /v1/sessions/{platformSessionId}/runs": nf("/v1/sessions/"+a.session+"/runs", "not_found"),
	}
	cases["POST /v1/runs/{runId}/cancel"] = sweepCase{path: "/v1/runs/" + a.done + "/cancel?wait=0", body: `{"reason":"probe"}`, status: 404, code: "run_not_found"}
	cases["POST /v1/runs/{runId}/inputs"] = sweepCase{path: "/v1/runs/" + a.paused + "/inputs?wait=0", body: steer, status: 404, code: "run_not_found"}
	cases["POST /v1/runs/{runId}/approval-decisions"] = sweepCase{path: "/v1/runs/" + a.paused + "/approval-decisions?wait=0",
		body: `{"itemId":"itm_00000000000000000000000000","decision":"allow","scope":"item"}`, status: 404, code: "run_not_found"}
	cases["POST /v1/runs/{runId}/compact"] = sweepCase{path: "/v1/runs/" + a.paused + "/compact?wait=0", body: `{}`, status: 404, code: "run_not_found"}
	cases["GET /v1/runs/{runId}/stream"] = sweepCase{path: "/v1/runs/" + a.done + "/stream", status: 404, code: "run_not_found"}
	cases["GET /v1/sessions/{platformSessionId}/stream"] = sweepCase{path: "/v1/sessions/" + a.session + "/stream", status: 404, code: "not_found"}
	// Agent profiles are global today: every tenant sees every agent.
	cases["GET /v1/agents"] = sweepCase{path: "/v1/agents", status: 200}
	// whoami answers with the caller's own principal only.
	cases["GET /v1/whoami"] = sweepCase{path: "/v1/whoami", status: 200}
	cases["GET /v1/agents/{agentId}"] = sweepCase{path: "/v1/agents/asker", status: 200}
	cases["GET /v1/runs/{runId}/snapshot"] = nf("/v1/runs/"+a.done+"/snapshot", "run_not_found")
	cases["GET /v1/sessions/{platformSessionId}/grants"] = nf("/v1/sessions/"+a.session+"/grants", "not_found")
	cases["DELETE /v1/sessions/{platformSessionId}/grants/{grantId}"] = sweepCase{
		path: "/v1/sessions/" + a.session + "/grants/" + a.grant + "?wait=0", body: `{"reason":"probe"}`, status: 404, code: "not_found"}
	cases["GET /v1/sessions/{platformSessionId}/state"] = nf("/v1/sessions/"+a.session+"/state", "not_found")
	// Another tenant's message names a session of its own with A's id, which
	// has no run: it needs agentId, as if A's session did not exist.
	cases["POST /v1/sessions/{platformSessionId}/messages"] = sweepCase{path: "/v1/sessions/" + a.session + "/messages?wait=0",
		body: `{"content":"probe from another tenant"}`, hdr: []string{"Idempotency-Key", "iso-msg"}, status: 422, code: "validation_failed"}
	cases["POST /v1/sessions/{platformSessionId}/interrupt"] = sweepCase{path: "/v1/sessions/" + a.session + "/interrupt?wait=0",
		body: `{"cancelQueued":true}`, status: 404, code: "not_found"}
	return cases
}

// specOp is what the sweep reads of an OpenAPI operation.
type specOp struct {
	Security    *[]map[string][]string     `json:"security"`
	RequestBody json.RawMessage            `json:"requestBody"`
	Responses   map[string]json.RawMessage `json:"responses"`
}

// declares fails t unless op declares the status of ans.
func (op specOp) declares(t *testing.T, what string, ans answer) {
	t.Helper()
	if _, ok := op.Responses[strconv.Itoa(ans.status)]; !ok {
		t.Errorf("%s: HTTP %d, which the operation does not declare: %s", what, ans.status, ans.body)
	}
}

// readSpec returns the served document's operations by "METHOD path".
func readSpec(t *testing.T, st *stack.Stack) map[string]specOp {
	t.Helper()
	ans := send(t, http.DefaultClient, st, "GET", "/openapi.json", "", "")
	var doc struct {
		Paths map[string]map[string]json.RawMessage
	}
	if err := json.Unmarshal([]byte(ans.body), &doc); ans.status != 200 || err != nil || len(doc.Paths) == 0 {
		t.Fatalf("GET /openapi.json: HTTP %d %v", ans.status, err)
	}
	ops := map[string]specOp{}
	for path, item := range doc.Paths {
		for method, raw := range item {
			m := strings.ToUpper(method)
			if !slices.Contains([]string{"GET", "PUT", "POST", "DELETE", "OPTIONS", "HEAD", "PATCH", "TRACE"}, m) {
				continue
			}
			var op specOp
			if err := json.Unmarshal(raw, &op); err != nil {
				t.Fatalf("%s %s: %v", m, path, err)
			}
			ops[m+" "+path] = op
		}
	}
	return ops
}

func TestIsolationSweep(t *testing.T) {
	t.Parallel()
	e, st, reqs := agentEnv(t, isolationAgents()...)
	startStreams(t, e, st)
	a := seedTenantA(t, st)
	ops := readSpec(t, st)
	cases := sweepCases(a)
	names := make([]string, 0, len(ops))
	for name := range ops {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		c, ok := cases[name]
		if !ok {
			t.Errorf("%s is in the OpenAPI document but has no isolation case: add one to sweepCases", name)
			continue
		}
		t.Run(strings.ReplaceAll(name, "/", "_"), func(t *testing.T) { sweepOne(t, st, a, ops[name], name, c) })
	}
	for name := range cases {
		if _, ok := ops[name]; !ok {
			t.Errorf("sweep case %s names no operation of the OpenAPI document", name)
		}
	}
	checkPublicExtras(t, st)
	checkPrincipalBinding(t, st, a)
	checkForeignParent(t, st, reqs, a)
	measureBurst(t, st, a)
}

func sweepOne(t *testing.T, st *stack.Stack, a tenantA, op specOp, name string, c sweepCase) {
	method := strings.Fields(name)[0]
	public := op.Security != nil && len(*op.Security) == 0
	// The owner's answer shows the probed resource exists.
	own := send(t, http.DefaultClient, st, method, c.path, token, c.body, c.hdr...)
	if own.status >= 300 {
		t.Fatalf("owner: HTTP %d %s", own.status, own.body)
	}
	op.declares(t, "owner", own)
	if !public {
		readOnlyProbe(t, st, op, method, c.path, c.body, own.status, c.hdr...)
	}
	for _, tok := range []string{"", "tok-nope"} {
		ans := send(t, http.DefaultClient, st, method, c.path, tok, c.body, c.hdr...)
		op.declares(t, "token "+tok, ans)
		switch {
		case public && ans.status != 200:
			t.Errorf("public, token %q: HTTP %d %s", tok, ans.status, ans.body)
		case !public && (ans.status != 401 || ans.code() != "unauthorized" || ans.hdr.Get("WWW-Authenticate") == ""):
			t.Errorf("token %q: HTTP %d %s, want 401 unauthorized with WWW-Authenticate", tok, ans.status, ans.body)
		}
		t.Logf("token %q: %d %s", tok, ans.status, ans.code())
	}
	ans := send(t, http.DefaultClient, st, method, c.path, otherToken, c.body, c.hdr...)
	op.declares(t, "other tenant", ans)
	if ans.status != c.status || ans.code() != c.code {
		t.Errorf("other tenant: HTTP %d code %q %s, want %d %q", ans.status, ans.code(), ans.body, c.status, c.code)
	}
	noSecrets(t, "other tenant", ans.body, a)
	t.Logf("other tenant: %d %s", ans.status, ans.code())
	if op.RequestBody != nil {
		checkBodies(t, st, a, op, method, c.path)
	}
}

// readOnlyProbe: the read-only tokens of the owner's tenant read what the
// owner reads, and every command is refused 403 forbidden_scope.
func readOnlyProbe(t *testing.T, st *stack.Stack, op specOp, method, path, body string, ownStatus int, hdr ...string) {
	t.Helper()
	for _, tok := range []string{readerToken, demoToken} {
		ans := send(t, http.DefaultClient, st, method, path, tok, body, hdr...)
		op.declares(t, "read-only "+tok, ans)
		switch {
		case method == "GET" && ans.status != ownStatus:
			t.Errorf("read-only %s: HTTP %d %s, want the owner's %d", tok, ans.status, ans.body, ownStatus)
		case method != "GET" && (ans.status != 403 || ans.code() != "forbidden_scope"):
			t.Errorf("read-only %s: HTTP %d %s, want 403 forbidden_scope", tok, ans.status, ans.body)
		}
	}
}

// checkPrincipalBinding: another actor of A's tenant cannot forge the actor,
// name A's sandbox owner or join A's session; act_as can join.
func checkPrincipalBinding(t *testing.T, st *stack.Stack, a tenantA) {
	t.Helper()
	ctx, bob, now := t.Context(), apiClient(t, st, bobToken, nil), client.CommandOptions{Wait: client.WaitFor(0)}
	hi := client.UserInput{Content: "hi"}
	join := client.CreateRunRequest{AgentID: "chat", Input: hi, PlatformSessionID: a.session}
	owner := client.CreateRunRequest{AgentID: "chat", Input: hi, SandboxKey: &client.SandboxKeyRequest{OwnerID: tenant}}
	for what, probe := range map[string]func() error{
		"forged actor": func() error { // a header the typed client does not send
			return send(t, nil, st, "POST", "/v1/runs?wait=0", bobToken, client.CreateRunRequest{AgentID: "chat", Input: hi}, "X-Actor-Id", tenant).err()
		},
		"foreign owner": func() error { _, err := bob.CreateRun(ctx, owner, now); return err },
		"join session":  func() error { _, err := bob.CreateRun(ctx, join, now); return err },
		"follow-up": func() error {
			_, err := bob.AppendInput(ctx, a.done, client.AppendInputRequest{Intent: "follow_up", Content: "x"}, now)
			return err
		},
	} {
		if err := probe(); !isProblem(err, 403, "forbidden_scope") {
			t.Errorf("%s: %v, want 403 forbidden_scope", what, err)
		}
	}
	if _, err := apiClient(t, st, adminToken, nil).CreateRun(ctx, join, now); err != nil {
		t.Errorf("act_as joining: %v, want accepted", err)
	}
}

func noSecrets(t *testing.T, who, body string, a tenantA) {
	t.Helper()
	for _, s := range a.secrets {
		if strings.Contains(body, s) {
			t.Errorf("%s: the answer holds tenant A's %q: %s", who, s, body)
		}
	}
}

// checkBodies sends bad bodies with both tokens: each tenant gets the same
// answer, so a bad body tells nothing about whether A's resource exists.
func checkBodies(t *testing.T, st *stack.Stack, a tenantA, op specOp, method, path string) {
	t.Helper()
	huge := `{"agentId":"chat","intent":"steer","input":{"content":"` + strings.Repeat("x", 1<<20) + `"}}`
	bad := []struct {
		what, body string
		status     int
		code       string
	}{
		{"oversize", huge, 413, "payload_too_large"},
		{"malformed JSON", `{"intent": "steer", "content": `, 400, "validation_failed"}, // huma: unparsable is 400
		{"invalid content", `{"agentId":"no such agent!","intent":"sing","content":"","reason":7}`, 422, "validation_failed"},
	}
	for _, b := range bad {
		for _, tok := range []string{token, otherToken} {
			ans := send(t, http.DefaultClient, st, method, path, tok, b.body)
			op.declares(t, b.what, ans)
			if ans.status != b.status || ans.code() != b.code {
				t.Errorf("%s with %s: HTTP %d code %q, want %d %s: %.300s", b.what, tok, ans.status, ans.code(), b.status, b.code, ans.body)
			}
			if tok == otherToken {
				noSecrets(t, b.what, ans.body, a)
			}
		}
		t.Logf("%s: %d %s", b.what, b.status, b.code)
	}
}

// checkPublicExtras probes the routes huma serves outside the document.
func checkPublicExtras(t *testing.T, st *stack.Stack) {
	t.Helper()
	for _, path := range []string{"/openapi.json", "/openapi-3.0.json", "/docs", "/schemas/Problem.json"} {
		if ans := send(t, http.DefaultClient, st, "GET", path, "", ""); ans.status != 200 {
			t.Errorf("public %s: HTTP %d", path, ans.status)
		}
	}
	for _, tok := range []string{"", otherToken} {
		if ans := send(t, http.DefaultClient, st, "GET", "/v1/nowhere", tok, ""); ans.status != 404 || ans.code() != "not_found" {
			t.Errorf("unknown route, token %q: HTTP %d %s", tok, ans.status, ans.body)
		}
	}
}

// checkForeignParent: a run of another tenant cannot be named as the parent
// of a new run, whose model would otherwise be sent A's conversation.
func checkForeignParent(t *testing.T, st *stack.Stack, reqs *requests, a tenantA) {
	t.Helper()
	body := fmt.Sprintf(`{"agentId":"chat","input":{"content":"what did they say?"},"parentRunId":%q}`, a.done)
	ans := send(t, http.DefaultClient, st, "POST", "/v1/runs?wait=5s", otherToken, body)
	if ans.status != 422 || ans.code() != "validation_failed" || !strings.Contains(ans.body, "body.parentRunId") {
		t.Errorf("create with another tenant's parentRunId: HTTP %d %s, want 422 at body.parentRunId", ans.status, ans.body)
	}
	noSecrets(t, "foreign parent", ans.body, a)
	if ans.status == 202 {
		var res struct{ RunID string }
		_ = json.Unmarshal([]byte(ans.body), &res)
		eventually.Succeeds(t, 10*time.Second, "run with foreign parent ends", func() error {
			if r := send(t, http.DefaultClient, st, "GET", "/v1/runs/"+res.RunID, otherToken, ""); !strings.Contains(r.body, `"status":"completed"`) &&
				!strings.Contains(r.body, `"status":"failed"`) {
				return fmt.Errorf("HTTP %d %s", r.status, r.body)
			}
			return nil
		})
		for _, r := range reqs.of("chat") {
			for _, m := range r.Messages {
				noSecrets(t, "the other tenant's model request", m.Content, a)
			}
		}
	}
	// The same parent is fine for its own tenant.
	if own := send(t, http.DefaultClient, st, "POST", "/v1/runs?wait=0", token, body); own.status != 202 {
		t.Errorf("create with the tenant's own parentRunId: HTTP %d %s", own.status, own.body)
	}
}

func isolationAgents() []profile.Profile {
	return []profile.Profile{
		{ID: "chat", Model: profile.ModelScripted, Script: []profile.Turn{{Text: "You said: {{input}}"}}},
		{ID: "asker", Model: profile.ModelScripted, Tools: []string{"ask_user"}, Script: []profile.Turn{
			{ToolCalls: call1("ask_user", `{"question":"Which colour for acme-q7?"}`)}, {Text: "Painting it."}}},
		{ID: "gater", Model: profile.ModelScripted, Tools: []string{"shell"}, Policy: policy.Config{Rules: []policy.Rule{deployRule}},
			Script: []profile.Turn{{ToolCalls: call1("shell", `{"command":"echo deploy"}`)}, {Text: "Deployed."}}},
	}
}

// seedTenantA creates A's completed run, its session's follow-up run and a
// run paused on a clarification question.
func seedTenantA(t *testing.T, st *stack.Stack) tenantA {
	t.Helper()
	a := tenantA{session: "sess-acme-iso-k3"}
	a.done = createRun(t, apiOf(t, st), client.CreateRunRequest{AgentID: "chat", Input: client.UserInput{Content: "acme secret plan zx81"},
		PlatformSessionID: a.session}, "iso-done").RunID
	a.paused = create(t, st, "asker", "paint the acme door", "iso-paused").RunID
	waitStatus(t, st, a.done, "completed", 10*time.Second)
	next := input(t, st, a.done, "follow_up", "acme follow-up qq42", "iso-next")
	if next.CreatedRunID == "" {
		t.Fatalf("follow-up: %+v", next)
	}
	a.next, a.commandID = next.CreatedRunID, next.CommandID
	waitStatus(t, st, a.next, "completed", 10*time.Second)
	if run := waitStatus(t, st, a.paused, "paused", 10*time.Second); run.PauseReason != string(events.PauseAwaitingUserInput) {
		t.Fatalf("paused run %+v", run)
	}
	a.grant = seedGrant(t, st, a.session)
	a.secrets = []string{a.done, a.paused, a.next, a.session, a.commandID, a.grant, "zx81", "qq42", "acme-q7", "acme door", `"acme"`}
	return a
}

// measureBurst logs the latency of good requests alone and while a burst of
// bad ones runs. It asserts no timing: the figures are for the report.
func measureBurst(t *testing.T, st *stack.Stack, a tenantA) {
	t.Helper()
	const goodN, burstN, workers = 300, 2000, 32
	good := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	quiet := goodLatencies(t, good, st, a, goodN, nil)
	stop := make(chan struct{})
	var loud []time.Duration
	var wg sync.WaitGroup
	wg.Go(func() { loud = goodLatencies(t, good, st, a, goodN, stop) })
	began := time.Now()
	statuses := badBurst(st, a, burstN, workers)
	took := time.Since(began)
	close(stop)
	wg.Wait()
	for s, n := range statuses {
		if s >= 500 || (s < 400 && s != 0) {
			t.Errorf("%d bad requests answered HTTP %d", n, s)
		}
	}
	t.Logf("good GET /v1/runs/{runId} without burst: n=%d p50=%s p99=%s", len(quiet), pct(quiet, 50), pct(quiet, 99))
	t.Logf("good GET /v1/runs/{runId} during burst: n=%d p50=%s p99=%s", len(loud), pct(loud, 50), pct(loud, 99))
	t.Logf("burst: %d bad requests from %d goroutines in %s (%.0f/s), statuses %v",
		burstN, workers, took.Round(time.Millisecond), float64(burstN)/took.Seconds(), statuses)
}

// goodLatencies times the owner's GET of a run: n requests, or until stop
// is closed when stop is not nil (at least n then too).
func goodLatencies(t *testing.T, client *http.Client, st *stack.Stack, a tenantA, n int, stop chan struct{}) []time.Duration {
	var out []time.Duration
	for i := 0; ; i++ {
		if i >= n {
			if stop == nil {
				return out
			}
			select {
			case <-stop:
				return out
			default:
			}
		}
		began := time.Now()
		if ans := send(t, client, st, "GET", "/v1/runs/"+a.done, token, ""); ans.status != 200 {
			t.Errorf("good request: HTTP %d", ans.status)
			return out
		}
		out = append(out, time.Since(began))
	}
}

// badBurst sends n unauthorised, foreign, malformed and oversize requests
// from workers goroutines and counts the answers' statuses.
func badBurst(st *stack.Stack, a tenantA, n, workers int) map[int]int {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: workers}}
	huge := `{"intent":"steer","content":"` + strings.Repeat("y", 1<<20) + `"}`
	kinds := []struct{ method, path, tok, body string }{
		{"GET", "/v1/runs/" + a.done, "", ""},
		{"GET", "/v1/runs/" + a.done + "/events", otherToken, ""},
		{"POST", "/v1/runs/" + a.paused + "/inputs", otherToken, `{"intent":`},
		{"POST", "/v1/runs/" + a.paused + "/inputs", "tok-nope", `{"intent":"steer","content":"x"}`},
		{"GET", "/v1/commands/" + a.commandID, otherToken, ""},
		{"POST", "/v1/runs", otherToken, `{"agentId":"!","input":{}}`},
		{"GET", "/v1/sessions/" + a.session + "/runs", otherToken, ""},
		{"POST", "/v1/runs/" + a.paused + "/inputs", otherToken, huge},
	}
	var mu sync.Mutex
	statuses := map[int]int{}
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range next {
				k := kinds[i%len(kinds)]
				ans, _ := do(client, st, k.method, k.path, k.tok, k.body) // a reset counts as status 0
				mu.Lock()
				statuses[ans.status]++
				mu.Unlock()
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return statuses
}

func pct(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)].Round(10 * time.Microsecond)
}

// seedGrant gives a platform_session grant in session and returns its id.
func seedGrant(t *testing.T, st *stack.Stack, session string) string {
	t.Helper()
	runID := createRun(t, apiOf(t, st), client.CreateRunRequest{AgentID: "gater", Input: client.UserInput{Content: "deploy"},
		PlatformSessionID: session}, "iso-grant").RunID
	waitStatus(t, st, runID, "paused", 10*time.Second)
	decide(t, st, runID, pendingApprovals(t, st, runID, 1)[0], "allow", "platform_session", "iso-grant-allow")
	waitStatus(t, st, runID, "completed", 10*time.Second)
	grants := payloads[events.PermissionGrantPayload](t, st, runID)
	if len(grants) != 1 {
		t.Fatalf("grants %+v", grants)
	}
	return grants[0].GrantID
}
