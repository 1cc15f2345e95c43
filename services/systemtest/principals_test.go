package systemtest_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/services/api"
	"github.com/xbot-runtime/xbot/services/api/client"
	"github.com/xbot-runtime/xbot/services/stack"
)

// The principal tests: a token is a tenant, an actor and scopes; the actor
// and the default sandbox owner come from it, never from the client.

// Tokens of tenant acme's people, besides token (actor acme) and otherToken.
const (
	aliceToken  = "tok-alice"
	bobToken    = "tok-bob"
	readerToken = "tok-reader"
	demoToken   = "tok-demo"
	adminToken  = "tok-admin"
)

// testTokens is every token the test stacks accept. token acts as acme
// itself, with act_as: load tests spread runs over many sandbox owners.
func testTokens() map[string]string {
	return map[string]string{token: actingTenant, otherToken: "other",
		aliceToken: tenant + "/alice", bobToken: tenant + "/bob", readerToken: tenant + "/reader/read",
		demoToken: tenant + "/guest/demo", adminToken: tenant + "/ops-admin/act_as"}
}

// actingTenant is token's principal: actor acme, allowed to act for others.
const actingTenant = tenant + "/" + tenant + "/full+act_as"

// acceptedActor is the actor id the run's runtime.run.accepted records.
func acceptedActor(t *testing.T, st *stack.Stack, runID string) string {
	t.Helper()
	evs := payloads[events.RunAcceptedPayload](t, st, runID)
	if len(evs) == 0 {
		t.Fatalf("run %s has no runtime.run.accepted", runID)
	}
	return evs[0].Actor.ID
}

// shipIn is the CreateRun of agent ops, in session ("": none).
func shipIn(session string) client.CreateRunRequest {
	return client.CreateRunRequest{AgentID: "ops", Input: client.UserInput{Content: "ship"}, PlatformSessionID: session}
}

func TestActorComesFromTheTokenNeverFromAHeader(t *testing.T) {
	t.Parallel()
	count := filepath.Join(t.TempDir(), "count")
	_, st, _ := agentEnv(t, deployer("ops", count, "deploy"))
	// The typed client sends no X-Actor-Id: the forged header goes raw.
	if ans := send(t, nil, st, "POST", "/v1/runs", bobToken, shipIn(""), "Idempotency-Key", "actor-1", "X-Actor-Id", "ciso.alice"); ans.status != 403 || ans.code() != "forbidden_scope" {
		t.Fatalf("create with a forged X-Actor-Id: HTTP %d %s, want 403 forbidden_scope", ans.status, ans.body)
	}
	bob := apiClient(t, st, bobToken, nil)
	runID := createRun(t, bob, shipIn(""), "actor-1").RunID
	waitStatus(t, st, runID, "paused", 10*time.Second)
	if got := acceptedActor(t, st, runID); got != "bob" {
		t.Errorf("run accepted for actor %q, want bob", got)
	}
	if owner := getRun(t, st, runID).SandboxKey.OwnerID; owner != "bob" {
		t.Errorf("sandbox owner %q, want bob", owner)
	}
	item := pendingApprovals(t, st, runID, 1)[0]
	decision := client.ApprovalDecisionRequest{ItemID: item, Decision: "allow", Scope: "item"}
	if ans := send(t, nil, st, "POST", "/v1/runs/"+runID+"/approval-decisions", bobToken, decision, "X-Actor-Id", "ciso.alice"); ans.status != 403 || ans.code() != "forbidden_scope" {
		t.Fatalf("decision as ciso.alice by bob's token: HTTP %d %s, want 403", ans.status, ans.body)
	}
	if _, err := bob.DecideApproval(t.Context(), runID, decision, client.CommandOptions{IdempotencyKey: "actor-1-d"}); err != nil {
		t.Fatalf("decision: %v", err)
	}
	waitStatus(t, st, runID, "completed", 10*time.Second)
	decided := payloads[events.ApprovalDecisionPayload](t, st, runID)
	if len(decided) == 0 || decided[0].Actor.ID != "bob" {
		t.Errorf("decisions recorded %+v, want bob's (the token's principal)", decided)
	}
}

func TestReadOnlyTokensReadAndStreamButEveryCommandIs403(t *testing.T) {
	t.Parallel()
	e, st, _ := agentEnv(t, isolationAgents()...)
	startStreams(t, e, st)
	runID := runUntil(t, st, "chat", "hello", "ro-1", "completed", 10*time.Second)
	ops := readSpec(t, st)
	for _, tok := range []string{readerToken, demoToken} {
		commands := 0
		for name, op := range ops {
			method, path, _ := strings.Cut(name, " ")
			if method == "GET" || op.Security != nil && len(*op.Security) == 0 {
				continue
			}
			commands++
			path = strings.ReplaceAll(path, "{runId}", runID)
			ans := send(t, nil, st, method, path+"?wait=0", tok, `{}`)
			if ans.status != 403 || ans.code() != "forbidden_scope" {
				t.Errorf("%s with %s: HTTP %d %s, want 403 forbidden_scope", name, tok, ans.status, ans.body)
			}
		}
		if commands < 5 {
			t.Errorf("only %d command routes in the document", commands)
		}
		for _, path := range []string{"/v1/runs/" + runID, "/v1/runs/" + runID + "/events", "/v1/runs/" + runID + "/items", "/v1/runs"} {
			if ans := send(t, nil, st, "GET", path, tok, nil); ans.status != 200 {
				t.Errorf("GET %s with %s: HTTP %d %s", path, tok, ans.status, ans.body)
			}
		}
		if ans := send(t, nil, st, "GET", "/v1/runs/"+runID+"/stream", tok, nil); ans.status != 200 ||
			!strings.HasPrefix(ans.hdr.Get("Content-Type"), "text/event-stream") {
			t.Errorf("stream with %s: HTTP %d %s", tok, ans.status, ans.body)
		}
	}
}

func TestOwnerAndSessionBelongToTheirPrincipal(t *testing.T) {
	t.Parallel()
	count := filepath.Join(t.TempDir(), "count")
	_, st, _ := agentEnv(t, deployer("ops", count, "deploy"))
	ctx, alice, bob := t.Context(), apiClient(t, st, aliceToken, nil), apiClient(t, st, bobToken, nil)
	alicesSandbox := shipIn("")
	alicesSandbox.SandboxKey = &client.SandboxKeyRequest{OwnerID: "alice"}
	if _, err := bob.CreateRun(ctx, alicesSandbox, client.CommandOptions{}); !isProblem(err, 403, "forbidden_scope") {
		t.Fatalf("bob naming alice's sandbox: %v, want 403 forbidden_scope", err)
	}
	// Alice's session holds a platform_session grant.
	first := createRun(t, alice, shipIn("sess-alice"), "own-1").RunID
	waitStatus(t, st, first, "paused", 10*time.Second)
	item := pendingApprovals(t, st, first, 1)[0]
	if _, err := alice.DecideApproval(ctx, first, client.ApprovalDecisionRequest{ItemID: item, Decision: "allow", Scope: "platform_session"},
		client.CommandOptions{IdempotencyKey: "own-1-d"}); err != nil {
		t.Fatalf("decision: %v", err)
	}
	waitStatus(t, st, first, "completed", 10*time.Second)
	if _, err := bob.CreateRun(ctx, shipIn("sess-alice"), client.CommandOptions{IdempotencyKey: "own-2"}); !isProblem(err, 403, "forbidden_scope") {
		t.Fatalf("bob joining alice's session: %v, want 403 forbidden_scope", err)
	}
	followUp := client.AppendInputRequest{Intent: "follow_up", Content: "ship again"}
	if _, err := bob.AppendInput(ctx, first, followUp, client.CommandOptions{}); !isProblem(err, 403, "forbidden_scope") {
		t.Fatalf("bob following up alice's run: %v, want 403 forbidden_scope", err)
	}
	if _, err := bob.CancelRun(ctx, first, "", client.CommandOptions{}); !isProblem(err, 403, "forbidden_scope") {
		t.Fatalf("bob cancelling alice's run: %v, want 403 forbidden_scope", err)
	}
	if runs, err := apiOf(t, st).AllRuns(ctx, client.RunQuery{PlatformSessionID: "sess-alice"}); err != nil || len(runs) != 1 {
		t.Fatalf("alice's session has runs %+v (%v), want only hers", runs, err)
	}
	// With act_as the admin joins, inherits the grant, and is recorded as itself.
	admin := shipIn("sess-alice")
	admin.SandboxKey = &client.SandboxKeyRequest{OwnerID: "alice"}
	joined := createRun(t, apiClient(t, st, adminToken, nil), admin, "own-3").RunID
	waitStatus(t, st, joined, "completed", 10*time.Second)
	if n := countType(t, st, joined, events.RunPaused); n != 0 {
		t.Errorf("the admin's run paused %d times; the session grant should cover it", n)
	}
	if got := acceptedActor(t, st, joined); got != "ops-admin" {
		t.Errorf("admin's run accepted for %q, want ops-admin", got)
	}
	if owner := getRun(t, st, joined).SandboxKey.OwnerID; owner != "alice" {
		t.Errorf("sandbox owner %q, want alice", owner)
	}
}

// TestTwoFirstCreatesInASessionHaveOneOwner: two actors create in a new
// session at once; exactly one owns it, the other is refused.
func TestTwoFirstCreatesInASessionHaveOneOwner(t *testing.T) {
	t.Parallel()
	_, st, _ := agentEnv(t, isolationAgents()...)
	for round := range 5 {
		session := fmt.Sprintf("sess-race-%d", round)
		errs := make([]error, 2)
		var wg sync.WaitGroup
		for i, tok := range []string{aliceToken, bobToken} {
			wg.Go(func() {
				_, errs[i] = apiClient(t, st, tok, nil).CreateRun(t.Context(), client.CreateRunRequest{AgentID: "chat",
					Input: client.UserInput{Content: "hi"}, PlatformSessionID: session}, client.CommandOptions{IdempotencyKey: session})
			})
		}
		wg.Wait()
		accepted, refused := 0, 0
		for _, err := range errs {
			switch {
			case err == nil:
				accepted++
			case isProblem(err, 403, "forbidden_scope"):
				refused++
			}
		}
		if accepted != 1 || refused != 1 {
			t.Errorf("%s: answers %v, want one accepted and one 403 forbidden_scope", session, errs)
		}
	}
}

// TestStreamCapsAndIdleTimeout: a principal's streams beyond its cap, and
// any beyond the instance's, are answered 429 too_many_streams with
// Retry-After; a closed stream frees its slot; an idle keep-alive
// connection is closed by the server.
func TestStreamCapsAndIdleTimeout(t *testing.T) {
	t.Parallel()
	e := newEnv(t).withAgents(isolationAgents()...)
	st := e.startWith("caps", func(o *stack.Options) {
		o.APILimits = api.Limits{MaxStreamsPerPrincipal: 2, MaxStreams: 3, IdleTimeout: 300 * time.Millisecond}
	})
	startStreams(t, e, st)
	for _, tok := range []string{aliceToken, bobToken} {
		createRun(t, apiClient(t, st, tok, nil), client.CreateRunRequest{AgentID: "chat", Input: client.UserInput{Content: "hi"},
			PlatformSessionID: "sess-cap-" + tok}, "")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	open := func(tok string) *http.Response {
		eventually.Succeeds(t, 10*time.Second, "session visible", func() error {
			_, err := apiClient(t, st, tok, nil).ListSessionRuns(ctx, "sess-cap-"+tok, client.RunQuery{})
			return err
		})
		// One connection per stream, so a held stream never shares one.
		hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
		resp, err := apiClient(t, st, tok, hc).Send(ctx, http.MethodGet, "/v1/sessions/sess-cap-"+tok+"/stream", nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = resp.Body.Close() })
		return resp
	}
	refused := func(resp *http.Response, what string) {
		t.Helper()
		raw, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 429 || !strings.Contains(string(raw), `"too_many_streams"`) || resp.Header.Get("Retry-After") == "" {
			t.Fatalf("%s: HTTP %d %s %v, want 429 too_many_streams with Retry-After", what, resp.StatusCode, raw, resp.Header)
		}
	}
	a1, a2 := open(aliceToken), open(aliceToken)
	if a1.StatusCode != 200 || a2.StatusCode != 200 {
		t.Fatalf("alice's streams: HTTP %d, %d", a1.StatusCode, a2.StatusCode)
	}
	refused(open(aliceToken), "alice's third stream")
	if b1 := open(bobToken); b1.StatusCode != 200 {
		t.Fatalf("bob's first stream: HTTP %d", b1.StatusCode)
	}
	refused(open(bobToken), "a stream beyond the instance's cap")
	_ = a1.Body.Close()
	eventually.Succeeds(t, 10*time.Second, "a closed stream frees its slot", func() error {
		resp := open(aliceToken)
		if resp.StatusCode != 200 {
			return fmt.Errorf("HTTP %d", resp.StatusCode)
		}
		return nil
	})
	checkIdleClosed(t, st)
}

// checkIdleClosed sends one request on a raw keep-alive connection, then
// waits for the server to close the connection: it must, well before the
// read deadline, because the connection is idle.
func checkIdleClosed(t *testing.T, st *stack.Stack) {
	t.Helper()
	conn, err := net.Dial("tcp", st.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := fmt.Fprintf(conn, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	idle := time.Now()
	if _, err := br.ReadByte(); !errors.Is(err, io.EOF) {
		t.Fatalf("idle keep-alive connection: read %v, want EOF (closed by the server)", err)
	}
	t.Logf("the idle connection was closed after %s", time.Since(idle).Round(time.Millisecond))
}
