package systemtest_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"go.uber.org/zap/zaptest"

	"github.com/xbot-runtime/xbot/services/api/client"
	"github.com/xbot-runtime/xbot/services/imgateway"
	"github.com/xbot-runtime/xbot/services/imgateway/wire"
	"github.com/xbot-runtime/xbot/services/stack"
)

// The sandbox IM gateway (docs/im.md) against a real system, through a real
// WebSocket client: every frame of the wire protocol, the closes, the
// read-only token, idempotency of messages and buttons, delivery after a
// reconnect.

// imTimeout bounds each wait for a frame; it is a failure bound, never a
// timing assertion.
const imTimeout = 30 * time.Second

// gatewayOf serves a gateway of st whose new conversations start agentID.
func gatewayOf(t *testing.T, e *env, st *stack.Stack, agentID string, eps ...imgateway.Endpoint) (*imgateway.Gateway, string) {
	t.Helper()
	api, err := client.New(client.Config{BaseURL: "http://" + st.Addr()})
	if err != nil {
		t.Fatal(err)
	}
	gw, err := imgateway.New(imgateway.Config{Endpoints: eps, API: api, Kafka: e.kcfg, AgentID: agentID,
		ShellIsolation: wire.ShellIsolation{Provider: "local"}, Logger: zaptest.NewLogger(t).Named("im")})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gw)
	t.Cleanup(func() { gw.Close(); srv.Close() })
	return gw, "ws" + strings.TrimPrefix(srv.URL, "http")
}

// imClient is a connected sandbox client.
type imClient struct {
	t  *testing.T
	ws *websocket.Conn
}

// dialIM connects to url with tok and reads the ready frame.
func dialIM(t *testing.T, url, tok string) (*imClient, wire.Frame) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), imTimeout)
	defer cancel()
	ws, resp, err := websocket.Dial(ctx, url+"?token="+tok, nil)
	if err != nil {
		t.Fatalf("dial %s: %v", url, err)
	}
	if resp.Body != nil {
		_ = resp.Body.Close()
	}
	ws.SetReadLimit(1 << 20)
	c := &imClient{t: t, ws: ws}
	t.Cleanup(func() { _ = ws.CloseNow() })
	ready := c.next()
	if ready.Type != wire.TypeReady {
		t.Fatalf("first frame %+v, want ready", ready)
	}
	return c, ready
}

// dialWithHeader connects to url with tok as the Authorization bearer and
// reads the ready frame.
func dialWithHeader(t *testing.T, url, tok string) *imClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), imTimeout)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + tok}}})
	if err != nil {
		t.Fatalf("dial %s: %v", url, err)
	}
	c := &imClient{t: t, ws: ws}
	t.Cleanup(func() { _ = ws.CloseNow() })
	if f := c.next(); f.Type != wire.TypeReady {
		t.Fatalf("first frame %+v, want ready", f)
	}
	return c
}

// dialStatus is the HTTP status a handshake to url with tok is refused with.
func dialStatus(t *testing.T, url, tok string) int {
	t.Helper()
	ws, resp, err := websocket.Dial(t.Context(), url+"?token="+tok, nil)
	if err == nil {
		_ = ws.CloseNow()
		t.Fatalf("dial %s: connected, want a refusal", url)
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

// send writes a frame: a string as it is, anything else as JSON.
func (c *imClient) send(frame any) {
	c.t.Helper()
	b, ok := frame.(string)
	if !ok {
		raw, err := json.Marshal(frame)
		if err != nil {
			c.t.Fatal(err)
		}
		b = string(raw)
	}
	if err := c.ws.Write(c.t.Context(), websocket.MessageText, []byte(b)); err != nil {
		c.t.Fatal(err)
	}
}

// next reads one frame.
func (c *imClient) next() wire.Frame {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(c.t.Context(), imTimeout)
	defer cancel()
	_, b, err := c.ws.Read(ctx)
	if err != nil {
		c.t.Fatalf("read frame: %v", err)
	}
	var f wire.Frame
	if err := json.Unmarshal(b, &f); err != nil {
		c.t.Fatalf("frame %s: %v", b, err)
	}
	return f
}

// until reads frames until one's text contains want and returns it.
func (c *imClient) until(want string) wire.Frame {
	c.t.Helper()
	for {
		if f := c.next(); strings.Contains(textOf(f), want) {
			return f
		}
	}
}

// closed reads until the connection is closed and returns its close code.
func (c *imClient) closed() websocket.StatusCode {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(c.t.Context(), imTimeout)
	defer cancel()
	for {
		if _, _, err := c.ws.Read(ctx); err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				c.t.Fatal("connection not closed")
			}
			return websocket.CloseStatus(err)
		}
	}
}

// textOf is a frame's text segments.
func textOf(f wire.Frame) string {
	var b strings.Builder
	for _, s := range f.Content {
		if s.Type == "text" {
			t, _ := s.Data["text"].(string)
			b.WriteString(t)
		}
	}
	return b.String()
}

// frameSeg builds an inbound frame.
func frameSeg(typ, id, messageID string, segs ...map[string]any) map[string]any {
	f := map[string]any{"type": typ, "id": id, "content": segs}
	if messageID != "" {
		f["messageId"] = messageID
	}
	return f
}

func textSeg(s string) map[string]any {
	return map[string]any{"type": "text", "data": map[string]any{"text": s}}
}

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
	sid, _ := wire.SessionID(wire.Conversation{Endpoint: "sandbox-bot", Type: "group", ID: "test-group"})
	page, err := apiOf(t, st).ListSessionRuns(t.Context(), sid, client.RunQuery{})
	if err != nil || page.Session.RunCount != 2 {
		t.Fatalf("session %s: %+v %v, want 2 runs", sid, page.Session, err)
	}
	// A frame that is not JSON is plain text in the owner's private chat.
	c.send("plain words")
	if f := c.until("You said: plain words"); f.Type != "private" || f.ID != "sandbox-user" {
		t.Fatalf("plain text reply %+v", f)
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
