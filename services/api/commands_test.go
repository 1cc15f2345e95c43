package api_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/api"
	"github.com/xbot-runtime/xbot/services/api/client"
)

func TestCreateRunSendsValidEnvelope(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.do(t, "POST", "/v1/runs", tokenA, createBody("hello")).want(t, http.StatusAccepted)
	res := r.command(t)
	if res.Outcome != client.OutcomeAccepted || !events.ValidID("run", res.RunID) || !events.ValidID("cmd", res.CommandID) {
		t.Fatalf("unexpected answer: %s", r.raw)
	}
	sent := e.sender.envelopes()
	if len(sent) != 1 {
		t.Fatalf("sent %d envelopes, want 1", len(sent))
	}
	c := sent[0]
	p, err := c.Validate()
	if err != nil {
		t.Fatalf("sent envelope invalid: %v", err)
	}
	cp := p.(*commands.CreateRunPayload)
	wantKey := events.SandboxKey{TenantID: tenantA, WorkspaceID: "default", AgentID: "coder", OwnerID: tenantA}
	switch {
	case c.Type != commands.CreateRun, c.TenantID != tenantA, c.CommandID != res.CommandID:
		t.Errorf("envelope type/tenant/id: %+v", c)
	case c.IdempotencyKey != "auto-"+c.CommandID:
		t.Errorf("generated idempotency key %q", c.IdempotencyKey)
	case c.RunID != commands.RunIDFor(tenantA, c.IdempotencyKey, wantKey, api.DefaultPartitions) || c.RunID != res.RunID:
		t.Errorf("runId %s is not derived from tenant, key and sandbox key", c.RunID)
	case !events.ValidID("sess", c.PlatformSessionID), c.Actor != events.Actor{Type: "user", ID: tenantA}:
		t.Errorf("session/actor defaults: %+v", c)
	case cp.SandboxKey != wantKey, cp.Input.Content != "hello":
		t.Errorf("payload %+v", cp)
	}
}

func TestCreateRunActorAndSandboxKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	body := createBody("hi")
	body.SandboxKey = &client.SandboxKeyRequest{WorkspaceID: "ws-1"}
	body.PlatformSessionID = "chat:42"
	e.do(t, "POST", "/v1/runs", tokenAlice, body, "X-Actor-Id", "alice").want(t, http.StatusAccepted)
	c := e.sender.envelopes()[0]
	p, _ := c.DecodePayload()
	key := p.(*commands.CreateRunPayload).SandboxKey
	if c.Actor.ID != "alice" || key.OwnerID != "alice" || key.WorkspaceID != "ws-1" || c.PlatformSessionID != "chat:42" {
		t.Fatalf("envelope %+v, sandbox key %+v", c, key)
	}
}

func TestCreateRunValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tooLong := strings.Repeat("x", commands.MaxContentBytes+1)
	cases := []struct {
		name     string
		path     string
		body     any
		headers  []string
		location string
		mention  string
	}{
		{name: "missing agentId", body: `{"input":{"content":"hi"}}`, location: "body.agentId"},
		{name: "missing content", body: `{"agentId":"a","input":{}}`, location: "body.input.content"},
		{name: "bad agentId", body: client.CreateRunRequest{AgentID: "a b", Input: client.UserInput{Content: "hi"}}, location: "body.agentId"},
		{name: "empty content", body: createBody(""), location: "body.input.content"},
		{name: "content too long", body: createBody(tooLong), location: "body.input.content"},
		{name: "bad idempotency key", body: createBody("hi"), headers: []string{"Idempotency-Key", "has space"}, location: "header.Idempotency-Key"},
		{name: "bad body idempotency key", body: `{"agentId":"a","idempotencyKey":"a/b","input":{"content":"hi"}}`, location: "body.idempotencyKey"},
		{name: "bad parentRunId", body: client.CreateRunRequest{AgentID: "a", ParentRunID: "nope", Input: client.UserInput{Content: "hi"}}, location: "body.parentRunId"},
		{name: "bad wait", path: "/v1/runs?wait=soon", body: createBody("hi"), location: "query.wait"},
		{name: "negative wait", path: "/v1/runs?wait=-1s", body: createBody("hi"), location: "query.wait"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.path
			if path == "" {
				path = "/v1/runs"
			}
			r := e.do(t, "POST", path, tokenA, tc.body, tc.headers...).wantCode(t, http.StatusUnprocessableEntity, "validation_failed")
			if tc.location != "" {
				r.wantLocation(t, tc.location)
			}
			if tc.mention != "" && !strings.Contains(string(r.raw), tc.mention) {
				t.Fatalf("problem does not name %s: %s", tc.mention, r.raw)
			}
			if len(r.raw) > 64<<10 {
				t.Fatalf("problem echoes the request (%d bytes)", len(r.raw))
			}
		})
	}
	if n := len(e.sender.envelopes()); n != 0 {
		t.Fatalf("%d invalid commands were sent", n)
	}
}

func TestBodyTooLargeAndMalformed(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withConfig(func(c *api.Config) { c.MaxBodyBytes = 1024 }))
	e.do(t, "POST", "/v1/runs", tokenA, createBody(strings.Repeat("x", 2048))).wantCode(t, http.StatusRequestEntityTooLarge, "payload_too_large")
	e.do(t, "POST", "/v1/runs", tokenA, `{"agentId":`).wantCode(t, http.StatusBadRequest, "validation_failed")
}

func TestSameIdempotencyKeyLandsOnSameRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	first := e.do(t, "POST", "/v1/runs", tokenA, createBody("hi"), "Idempotency-Key", "req-1").want(t, http.StatusAccepted).command(t)
	second := e.do(t, "POST", "/v1/runs", tokenA, createBody("hi"), "Idempotency-Key", "req-1").want(t, http.StatusAccepted).command(t)
	sent := e.sender.envelopes()
	key := events.SandboxKey{TenantID: tenantA, WorkspaceID: "default", AgentID: "coder", OwnerID: tenantA}
	if first.RunID != commands.RunIDFor(tenantA, "req-1", key, api.DefaultPartitions) || second.RunID != first.RunID {
		t.Fatalf("runIds %s, %s", first.RunID, second.RunID)
	}
	if first.Outcome != client.OutcomeAccepted || second.Outcome != client.OutcomeDuplicate {
		t.Fatalf("outcomes %s, %s", first.Outcome, second.Outcome)
	}
	// A duplicate names the original command and this request's own command.
	if second.CommandID != first.CommandID || second.OriginalCommandID != first.CommandID ||
		second.DuplicateCommandID != sent[1].CommandID || sent[1].CommandID == sent[0].CommandID ||
		second.OriginalOutcome != client.OutcomeAccepted {
		t.Fatalf("duplicate answer %+v (sent %s, %s)", second, sent[0].CommandID, sent[1].CommandID)
	}
	// The key may come in the body too (a field the client does not send);
	// another tenant's key is another run.
	third := e.do(t, "POST", "/v1/runs", tokenB, `{"agentId":"coder","input":{"content":"hi"},"idempotencyKey":"req-1"}`).
		want(t, http.StatusAccepted).command(t)
	if third.RunID == first.RunID || third.Outcome != client.OutcomeAccepted {
		t.Fatalf("other tenant's create: %+v", third)
	}
}

func TestWaitRunsOutAsPending(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.sender.stall() // no outcome ever arrives
	start := time.Now()
	r := e.do(t, "POST", "/v1/runs?wait=50ms", tokenA, createBody("hi")).want(t, http.StatusAccepted).command(t)
	if r.Outcome != client.OutcomePending || r.CommandID == "" || r.RunID == "" {
		t.Fatalf("answer %+v", r)
	}
	if time.Since(start) > 3*time.Second {
		t.Fatalf("wait=50ms took %s", time.Since(start))
	}
	r = e.do(t, "POST", "/v1/runs?wait=0", tokenA, createBody("hi")).want(t, http.StatusAccepted).command(t)
	if r.Outcome != client.OutcomePending || e.store.waitCalls() != 1 {
		t.Fatalf("wait=0 answer %+v after %d waits", r, e.store.waitCalls())
	}
}

func TestSendFailureIsUnavailable(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.sender.fail(errKafkaDown)
	r := e.do(t, "POST", "/v1/runs", tokenA, createBody("hi")).wantCode(t, http.StatusServiceUnavailable, "unavailable")
	if strings.Contains(string(r.raw), "broker") {
		t.Fatalf("problem leaks the internal error: %s", r.raw)
	}
}

func seedRun(e *env, tenant, status string) api.RunRecord {
	run := api.RunRecord{RunID: events.DerivedID("run", tenant, "seed-"+status), TenantID: tenant, AgentID: "coder",
		PlatformSessionID: "sess-1", Status: status, Input: []byte(`{"content":"hi"}`),
		SandboxKey: []byte(`{"tenantId":"` + tenant + `","workspaceId":"default","agentId":"coder","ownerId":"` + tenant + `"}`),
		LastSeq:    3, CreatedAt: time.UnixMilli(1_700_000_000_000), UpdatedAt: time.UnixMilli(1_700_000_001_000)}
	e.store.addRun(run)
	return run
}

func TestCancelAndAppendInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	run := seedRun(e, tenantA, "running")
	r := e.do(t, "POST", "/v1/runs/"+run.RunID+"/cancel", tokenA, nil).want(t, http.StatusAccepted).command(t)
	if r.RunID != run.RunID || r.Outcome != client.OutcomeAccepted {
		t.Fatalf("cancel answer %+v", r)
	}
	e.do(t, "POST", "/v1/runs/"+run.RunID+"/cancel", tokenA, `{"reason":"enough"}`).want(t, http.StatusAccepted)
	e.do(t, "POST", "/v1/runs/"+run.RunID+"/inputs", tokenA, client.AppendInputRequest{Intent: "steer", Content: "faster"}).want(t, http.StatusAccepted)
	sent := e.sender.envelopes()
	if len(sent) != 3 || sent[0].Type != commands.CancelRun || sent[2].Type != commands.AppendUserInput {
		t.Fatalf("sent %+v", sent)
	}
	for _, c := range sent {
		if c.RunID != run.RunID || c.PlatformSessionID != run.PlatformSessionID {
			t.Errorf("envelope %+v not for run %s in its session", c, run.RunID)
		}
	}
	e.do(t, "POST", "/v1/runs/"+run.RunID+"/inputs", tokenA, client.AppendInputRequest{Intent: "shout", Content: "x"}).
		wantCode(t, http.StatusUnprocessableEntity, "validation_failed").wantLocation(t, "body.intent")
}

func TestOtherTenantsRunIsNotFound(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	run := seedRun(e, tenantA, "running")
	for _, c := range []struct{ method, path string }{
		{"GET", "/v1/runs/" + run.RunID},
		{"GET", "/v1/runs/" + run.RunID + "/events"},
		{"POST", "/v1/runs/" + run.RunID + "/cancel"},
		{"POST", "/v1/runs/" + run.RunID + "/inputs"},
	} {
		var body any
		if strings.HasSuffix(c.path, "/inputs") {
			body = client.AppendInputRequest{Intent: "steer", Content: "x"}
		}
		e.do(t, c.method, c.path, tokenB, body).wantCode(t, http.StatusNotFound, "run_not_found")
	}
	e.do(t, "POST", "/v1/runs/run_missing/cancel", tokenA, nil).wantCode(t, http.StatusNotFound, "run_not_found")
	if n := len(e.sender.envelopes()); n != 0 {
		t.Fatalf("%d commands sent for a run the tenant cannot see", n)
	}
}

// TestAHandlerSlowerThanTheBodyTimeoutRunsToItsEnd waits for an outcome that
// never comes for longer than a body may take to arrive: the wait runs out as
// pending instead of being cancelled halfway, and so does the next request on
// the same keep-alive connection.
func TestAHandlerSlowerThanTheBodyTimeoutRunsToItsEnd(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withConfig(func(c *api.Config) { c.Limits.BodyReadTimeout = 20 * time.Millisecond }))
	e.sender.stall() // no outcome ever arrives
	for i := range 3 {
		// 300 ms: many times the body timeout, so its deadline passes while the handler waits.
		r := e.do(t, "POST", "/v1/runs?wait=300ms", tokenA, createBody("hi")).want(t, http.StatusAccepted)
		if r.command(t).Outcome != client.OutcomePending {
			t.Fatalf("request %d: answer %s", i, r.raw)
		}
	}
}
