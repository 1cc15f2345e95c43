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
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/services/api"
	"github.com/xbot-runtime/xbot/services/engine/profile"
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

// payloadActor is the actor id in the payload of the run's first event of typ.
func payloadActor(t *testing.T, st *stack.Stack, runID, typ string) string {
	t.Helper()
	evs := itemEvents(t, st, runID, typ)
	if len(evs) == 0 {
		t.Fatalf("run %s has no %s", runID, typ)
	}
	a, _ := evs[0]["actor"].(map[string]any)
	id, _ := a["id"].(string)
	return id
}

func createAs(t *testing.T, st *stack.Stack, tok string, body map[string]any, hdr ...string) (int, map[string]any) {
	t.Helper()
	return call(t, st, "POST", "/v1/runs", tok, body, hdr...)
}

func TestActorComesFromTheTokenNeverFromAHeader(t *testing.T) {
	t.Parallel()
	count := filepath.Join(t.TempDir(), "count")
	_, st, _ := agentEnv(t, deployer("ops", count, "deploy"))
	body := map[string]any{"agentId": "ops", "input": map[string]any{"content": "ship"}}
	code, ans := createAs(t, st, bobToken, body, "Idempotency-Key", "actor-1", "X-Actor-Id", "ciso.alice")
	if code != 403 || ans["code"] != "forbidden_scope" {
		t.Fatalf("create with a forged X-Actor-Id: HTTP %d %v, want 403 forbidden_scope", code, ans)
	}
	code, ans = createAs(t, st, bobToken, body, "Idempotency-Key", "actor-1")
	if code != 202 {
		t.Fatalf("create: HTTP %d %v", code, ans)
	}
	runID := ans["runId"].(string)
	waitStatus(t, st, runID, "paused", 10*time.Second)
	if got := payloadActor(t, st, runID, "runtime.run.accepted"); got != "bob" {
		t.Errorf("run accepted for actor %q, want bob", got)
	}
	_, run := call(t, st, "GET", "/v1/runs/"+runID, token, nil)
	if owner := run["sandboxKey"].(map[string]any)["ownerId"]; owner != "bob" {
		t.Errorf("sandbox owner %v, want bob", owner)
	}
	item := pendingApprovals(t, st, runID, 1)[0]
	decision := map[string]any{"itemId": item, "decision": "allow", "scope": "item"}
	path := "/v1/runs/" + runID + "/approval-decisions"
	if code, ans := call(t, st, "POST", path, bobToken, decision, "X-Actor-Id", "ciso.alice"); code != 403 || ans["code"] != "forbidden_scope" {
		t.Fatalf("decision as ciso.alice by bob's token: HTTP %d %v, want 403", code, ans)
	}
	if code, ans := call(t, st, "POST", path, bobToken, decision, "Idempotency-Key", "actor-1-d"); code != 202 {
		t.Fatalf("decision: HTTP %d %v", code, ans)
	}
	waitStatus(t, st, runID, "completed", 10*time.Second)
	if got := payloadActor(t, st, runID, "runtime.approval.decision_submitted"); got != "bob" {
		t.Errorf("decision recorded for %q, want bob (the token's principal)", got)
	}
}

func TestReadOnlyTokensReadAndStreamButEveryCommandIs403(t *testing.T) {
	t.Parallel()
	e, st, _ := agentEnv(t, isolationAgents()...)
	startStreams(t, e, st)
	runID := create(t, st, "chat", "hello", "ro-1")["runId"].(string)
	waitStatus(t, st, runID, "completed", 10*time.Second)
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
			ans := send(t, http.DefaultClient, st, method, path+"?wait=0", tok, `{}`)
			if ans.status != 403 || ans.code() != "forbidden_scope" {
				t.Errorf("%s with %s: HTTP %d %s, want 403 forbidden_scope", name, tok, ans.status, ans.body)
			}
		}
		if commands < 5 {
			t.Errorf("only %d command routes in the document", commands)
		}
		for _, path := range []string{"/v1/runs/" + runID, "/v1/runs/" + runID + "/events", "/v1/runs/" + runID + "/items", "/v1/runs"} {
			if ans := send(t, http.DefaultClient, st, "GET", path, tok, ""); ans.status != 200 {
				t.Errorf("GET %s with %s: HTTP %d %s", path, tok, ans.status, ans.body)
			}
		}
		if ans := send(t, http.DefaultClient, st, "GET", "/v1/runs/"+runID+"/stream", tok, ""); ans.status != 200 ||
			!strings.HasPrefix(ans.hdr.Get("Content-Type"), "text/event-stream") {
			t.Errorf("stream with %s: HTTP %d %s", tok, ans.status, ans.body)
		}
	}
}

func TestOwnerAndSessionBelongToTheirPrincipal(t *testing.T) {
	t.Parallel()
	count := filepath.Join(t.TempDir(), "count")
	_, st, _ := agentEnv(t, deployer("ops", count, "deploy"))
	ship := func(session string) map[string]any {
		b := map[string]any{"agentId": "ops", "input": map[string]any{"content": "ship"}}
		if session != "" {
			b["platformSessionId"] = session
		}
		return b
	}
	other := ship("")
	other["sandboxKey"] = map[string]any{"ownerId": "alice"}
	if code, ans := createAs(t, st, bobToken, other); code != 403 || ans["code"] != "forbidden_scope" {
		t.Fatalf("bob naming alice's sandbox: HTTP %d %v, want 403", code, ans)
	}
	// Alice's session holds a platform_session grant.
	code, ans := createAs(t, st, aliceToken, ship("sess-alice"), "Idempotency-Key", "own-1")
	if code != 202 {
		t.Fatalf("create: HTTP %d %v", code, ans)
	}
	first := ans["runId"].(string)
	waitStatus(t, st, first, "paused", 10*time.Second)
	item := pendingApprovals(t, st, first, 1)[0]
	code, ans = call(t, st, "POST", "/v1/runs/"+first+"/approval-decisions", aliceToken,
		map[string]any{"itemId": item, "decision": "allow", "scope": "platform_session"}, "Idempotency-Key", "own-1-d")
	if code != 202 {
		t.Fatalf("decision: HTTP %d %v", code, ans)
	}
	waitStatus(t, st, first, "completed", 10*time.Second)
	if code, ans := createAs(t, st, bobToken, ship("sess-alice"), "Idempotency-Key", "own-2"); code != 403 || ans["code"] != "forbidden_scope" {
		t.Fatalf("bob joining alice's session: HTTP %d %v, want 403", code, ans)
	}
	followUp := map[string]any{"intent": "follow_up", "content": "ship again"}
	if code, ans := call(t, st, "POST", "/v1/runs/"+first+"/inputs", bobToken, followUp); code != 403 || ans["code"] != "forbidden_scope" {
		t.Fatalf("bob following up alice's run: HTTP %d %v, want 403", code, ans)
	}
	if code, ans := call(t, st, "POST", "/v1/runs/"+first+"/cancel", bobToken, map[string]any{}); code != 403 || ans["code"] != "forbidden_scope" {
		t.Fatalf("bob cancelling alice's run: HTTP %d %v, want 403", code, ans)
	}
	if _, runs := call(t, st, "GET", "/v1/runs?platformSessionId=sess-alice", token, nil); len(runs["runs"].([]any)) != 1 {
		t.Fatalf("alice's session has runs %v, want only hers", runs["runs"])
	}
	// With act_as the admin joins, inherits the grant, and is recorded as itself.
	admin := ship("sess-alice")
	admin["sandboxKey"] = map[string]any{"ownerId": "alice"}
	code, ans = createAs(t, st, adminToken, admin, "Idempotency-Key", "own-3")
	if code != 202 {
		t.Fatalf("admin joining: HTTP %d %v", code, ans)
	}
	joined := ans["runId"].(string)
	waitStatus(t, st, joined, "completed", 10*time.Second)
	if n := countType(t, st, joined, "runtime.run.paused"); n != 0 {
		t.Errorf("the admin's run paused %d times; the session grant should cover it", n)
	}
	if got := payloadActor(t, st, joined, "runtime.run.accepted"); got != "ops-admin" {
		t.Errorf("admin's run accepted for %q, want ops-admin", got)
	}
	_, run := call(t, st, "GET", "/v1/runs/"+joined, token, nil)
	if owner := run["sandboxKey"].(map[string]any)["ownerId"]; owner != "alice" {
		t.Errorf("sandbox owner %v, want alice", owner)
	}
}

// TestTwoFirstCreatesInASessionHaveOneOwner: two actors create in a new
// session at once; exactly one owns it, the other is refused.
func TestTwoFirstCreatesInASessionHaveOneOwner(t *testing.T) {
	t.Parallel()
	_, st, _ := agentEnv(t, isolationAgents()...)
	for round := range 5 {
		session := fmt.Sprintf("sess-race-%d", round)
		codes := make([]int, 2)
		var wg sync.WaitGroup
		for i, tok := range []string{aliceToken, bobToken} {
			wg.Go(func() {
				codes[i], _ = createAs(t, st, tok, map[string]any{"agentId": "chat", "input": map[string]any{"content": "hi"},
					"platformSessionId": session}, "Idempotency-Key", session)
			})
		}
		wg.Wait()
		if slices.Sort(codes); !slices.Equal(codes, []int{202, 403}) {
			t.Errorf("%s: answers %v, want one 202 and one 403", session, codes)
		}
	}
}

// TestStreamCapsAndIdleTimeout: a principal's streams beyond its cap, and
// any beyond the instance's, are answered 429 too_many_streams with
// Retry-After; a closed stream frees its slot; an idle keep-alive
// connection is closed by the server.
func TestStreamCapsAndIdleTimeout(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.cat, _ = profile.NewCatalog(isolationAgents()...)
	st := e.startWith("caps", func(o *stack.Options) {
		o.APILimits = api.Limits{MaxStreamsPerPrincipal: 2, MaxStreams: 3, IdleTimeout: 300 * time.Millisecond}
	})
	startStreams(t, e, st)
	for _, tok := range []string{aliceToken, bobToken} {
		if code, ans := createAs(t, st, tok, map[string]any{"agentId": "chat", "input": map[string]any{"content": "hi"},
			"platformSessionId": "sess-cap-" + tok}); code != 202 {
			t.Fatalf("create: HTTP %d %v", code, ans)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	open := func(tok string) *http.Response {
		eventually.Succeeds(t, 10*time.Second, "session visible", func() error {
			if code, _ := call(t, st, "GET", "/v1/sessions/sess-cap-"+tok+"/runs", tok, nil); code != 200 {
				return fmt.Errorf("HTTP %d", code)
			}
			return nil
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
