package systemtest_test

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/xbot-runtime/xbot/services/api/client"
	"github.com/xbot-runtime/xbot/services/imgateway"
	"github.com/xbot-runtime/xbot/services/imgateway/wire"
)

// The sandbox IM gateway (docs/im.md) against a real system, through a real
// WebSocket client: every frame of the wire protocol, the closes, the
// read-only token, idempotency of messages and buttons, delivery after a
// reconnect.

func TestIMGatewayConversationFrames(t *testing.T) {
	t.Parallel()
	e, st, _ := agentEnv(t, echoAgent())
	_, url := gatewayOf(t, e, st, "chat")
	c, ready := dialIM(t, url+"/sandbox", token)
	if ready.Endpoint != "sandbox-bot" || ready.ID != "sandbox-user" || ready.CanExecute == nil || !*ready.CanExecute ||
		ready.ShellIsolation == nil || ready.ShellIsolation.Provider != "local" {
		t.Fatalf("ready %+v", ready)
	}
	c.send(frameSeg("group", "test-group", "client-msg-001", textSeg("/hello")))
	got := c.until("You said: /hello")
	if got.Type != "group" || got.ID != "test-group" || got.Bot != "sandbox-bot" || got.Endpoint != "sandbox-bot" || got.Timestamp == 0 {
		t.Fatalf("reply %+v", got)
	}
	// The same messageId again is the same message: no second run.
	c.send(frameSeg("group", "test-group", "client-msg-001", textSeg("/hello")))
	c.send(frameSeg("group", "test-group", "client-msg-002", textSeg("second")))
	c.until("You said: second")
	e.invariants(st) // the read models have caught up with the log
	sid, _ := wire.SessionID(wire.Conversation{Endpoint: "sandbox-bot", Type: "group", ID: "test-group"})
	page, err := apiOf(t, st).ListSessionRuns(t.Context(), sid, client.RunQuery{})
	if err != nil || page.Session.RunCount != 2 {
		t.Fatalf("session %s: %+v %v, want 2 runs", sid, page.Session, err)
	}
	// docs/im.md: a group chat's sandbox is the group's (the token may act_as).
	if owner := page.Runs[0].SandboxKey.OwnerID; owner != sid {
		t.Errorf("group chat's sandbox owner %q, want the group %q", owner, sid)
	}
	// A frame that is not JSON is plain text in the owner's private chat.
	c.send("plain words")
	if f := c.until("You said: plain words"); f.Type != "private" || f.ID != "sandbox-user" {
		t.Fatalf("plain text reply %+v", f)
	}
	// A private chat's sandbox is the user's: the token's actor.
	e.invariants(st)
	private, _ := wire.SessionID(wire.Conversation{Endpoint: "sandbox-bot", Type: "private", ID: "sandbox-user"})
	if page, err := apiOf(t, st).ListSessionRuns(t.Context(), private, client.RunQuery{}); err != nil || page.Runs[0].SandboxKey.OwnerID != tenant {
		t.Errorf("private chat's runs %+v %v, want the sandbox of actor %s", page.Runs, err, tenant)
	}
	// guild is channel; direct is private; an invalid messageId is ignored
	// (the message still goes, under a derived key); text stands in for content.
	c.send(map[string]any{"type": "guild", "id": "g/1 ü", "content": "in a guild", "messageId": "not valid!"})
	if f := c.until("You said: in a guild"); f.Type != "channel" || f.ID != "g/1 ü" {
		t.Fatalf("guild reply %+v", f)
	}
	c.send(map[string]any{"type": "direct", "id": "bob", "text": "by text"})
	if f := c.until("You said: by text"); f.Type != "private" || f.ID != "bob" {
		t.Fatalf("direct reply %+v", f)
	}
}

func TestIMGatewayReadOnlyTokenAndAuth(t *testing.T) {
	t.Parallel()
	e, st, _ := agentEnv(t, echoAgent())
	_, url := gatewayOf(t, e, st, "chat", imgateway.DefaultEndpoint, imgateway.Endpoint{ID: "second", Owner: "me"})
	if s := dialStatus(t, url+"/sandbox", ""); s != http.StatusUnauthorized {
		t.Fatalf("no token: %d", s)
	}
	if s := dialStatus(t, url+"/sandbox", "tok-unknown"); s != http.StatusUnauthorized {
		t.Fatalf("unknown token: %d", s)
	}
	if s := dialStatus(t, url+"/sandbox/second", demoToken); s != http.StatusForbidden {
		t.Fatalf("demo token on /sandbox/second: %d", s)
	}
	c, ready := dialIM(t, url+"/sandbox", demoToken)
	if ready.CanExecute == nil || *ready.CanExecute {
		t.Fatalf("ready of a demo token %+v", ready)
	}
	c.send(frameSeg("private", "", "demo-1", textSeg("run something")))
	if f := c.next(); f.Type != wire.TypeError || f.ID != "sandbox-user" || !strings.Contains(textOf(f), "只读") {
		t.Fatalf("answer to a demo token %+v", f)
	}
	sid, _ := wire.SessionID(wire.Conversation{Endpoint: "sandbox-bot", Type: "private", ID: "sandbox-user"})
	if _, err := apiOf(t, st).ListSessionRuns(t.Context(), sid, client.RunQuery{}); !isProblem(err, 404, "not_found") {
		t.Fatalf("a demo token's message reached the session: %v", err)
	}
	resp, err := http.Get(strings.Replace(url, "ws", "http", 1) + "/sandbox/second")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET of an endpoint's path: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
}

func TestIMGatewayGroupSandboxNeedsActAs(t *testing.T) {
	t.Parallel()
	e, st, _ := agentEnv(t, echoAgent())
	alice := apiClient(t, st, aliceToken, nil)
	_, err := alice.SendSessionMessage(t.Context(), "sess-owner", client.SessionMessageRequest{Content: "hi", AgentID: "chat", SandboxOwnerID: "bob"},
		client.CommandOptions{IdempotencyKey: "owner-1"})
	if !isProblem(err, http.StatusForbidden, "forbidden_scope") {
		t.Fatalf("another sandbox owner without act_as: %v", err)
	}
	// Without act_as, a group chat's runs use the actor's own sandbox.
	_, url := gatewayOf(t, e, st, "chat")
	c, _ := dialIM(t, url+"/sandbox", aliceToken)
	c.send(frameSeg("group", "team", "team-1", textSeg("hello team")))
	c.until("You said: hello team")
	e.invariants(st)
	sid, _ := wire.SessionID(wire.Conversation{Endpoint: "sandbox-bot", Type: "group", ID: "team"})
	page, err := alice.ListSessionRuns(t.Context(), sid, client.RunQuery{})
	if err != nil || len(page.Runs) != 1 || page.Runs[0].SandboxKey.OwnerID != "alice" {
		t.Fatalf("group chat of a token without act_as: %+v %v, want alice's sandbox", page.Runs, err)
	}
}

func TestIMGatewayCloses(t *testing.T) {
	t.Parallel()
	e, st, _ := agentEnv(t, echoAgent())
	gw, url := gatewayOf(t, e, st, "chat", imgateway.DefaultEndpoint, imgateway.Endpoint{ID: "other", Owner: "me"})
	a, _ := dialIM(t, url+"/sandbox", token)
	b := dialWithHeader(t, url+"/sandbox", token)
	if code := a.closed(); code != imgateway.CloseReplaced {
		t.Fatalf("replaced client closed %d, want 4000", code)
	}
	keep, _ := dialIM(t, url+"/sandbox/other", token)
	// A reload that changes the first endpoint's owner retires its generation.
	if err := gw.Reload([]imgateway.Endpoint{{ID: "sandbox-bot", Owner: "someone-else"}, {ID: "other", Owner: "me"}}); err != nil {
		t.Fatal(err)
	}
	if code := b.closed(); code != imgateway.CloseRetired {
		t.Fatalf("retired client closed %d, want 1012", code)
	}
	c, ready := dialIM(t, url+"/sandbox", token)
	if ready.ID != "someone-else" {
		t.Fatalf("ready after reload %+v", ready)
	}
	gw.Close()
	for _, cl := range []*imClient{c, keep} {
		if code := cl.closed(); code != imgateway.CloseStopping {
			t.Fatalf("stopped client closed %d, want 1001", code)
		}
	}
}

func TestIMGatewayApprovalButtonRunsTheToolOnce(t *testing.T) {
	t.Parallel()
	count := filepath.Join(t.TempDir(), "deploys")
	e, st, _ := agentEnv(t, deployer("ops", count, "deploy-im"))
	_, url := gatewayOf(t, e, st, "ops")
	c, _ := dialIM(t, url+"/sandbox", token)
	c.send(frameSeg("private", "", "ship-1", textSeg("ship it")))
	ask := c.until("shell")
	var allow map[string]any
	for _, s := range ask.Content {
		if s.Type == "action" && s.Data["label"] == "Allow" {
			allow = s.Data
		}
	}
	if allow == nil {
		t.Fatalf("approval request without an Allow button: %+v", ask)
	}
	press := frameSeg("private", "", "", map[string]any{"type": "action", "data": map[string]any{"id": allow["id"], "payload": allow["payload"]}})
	c.send(press)
	c.send(press)
	c.until("Done.")
	if got := lines(t, count); len(got) != 1 {
		t.Fatalf("the tool ran %d times: %v", len(got), got)
	}
}

func TestIMGatewayQuestionAnsweredByTheNextMessage(t *testing.T) {
	t.Parallel()
	e, st, _ := agentEnv(t, askerAgent)
	_, url := gatewayOf(t, e, st, "asker")
	c, _ := dialIM(t, url+"/sandbox", token)
	c.send(frameSeg("private", "", "paint-1", textSeg("paint the door")))
	c.until("Which colour?")
	c.send(frameSeg("private", "", "paint-2", textSeg("blue")))
	c.until("Painting it.")
}

func TestIMGatewayDeliversWhatCameWhileNoClientWasConnected(t *testing.T) {
	t.Parallel()
	e, st, _ := agentEnv(t, echoAgent())
	_, url := gatewayOf(t, e, st, "chat")
	first, _ := dialIM(t, url+"/sandbox", token)
	first.send(frameSeg("private", "", "m-1", textSeg("one")))
	first.until("You said: one")
	if err := first.ws.Close(websocket.StatusNormalClosure, "bye"); err != nil {
		t.Fatal(err)
	}
	// While no client is connected, the conversation gets a reply.
	sid, _ := wire.SessionID(wire.Conversation{Endpoint: "sandbox-bot", Type: "private", ID: "sandbox-user"})
	api := apiOf(t, st)
	res, err := api.SendSessionMessage(t.Context(), sid, client.SessionMessageRequest{Content: "two", AgentID: "chat"},
		client.CommandOptions{IdempotencyKey: "m-2", Wait: client.WaitFor(5 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := api.AwaitRun(t.Context(), res.RunID, func(r client.Run) bool { return r.Status == "completed" }); err != nil {
		t.Fatal(err)
	}
	second, _ := dialIM(t, url+"/sandbox", token)
	for {
		text := textOf(second.next())
		if text == "You said: one" {
			t.Fatal("a reply delivered before the reconnect came again")
		}
		if text == "You said: two" {
			return
		}
	}
}
