package systemtest_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
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

// The test kit of the IM gateway's tests: a gateway in front of a stack and
// a real WebSocket client of the sandbox protocol.

// imTimeout bounds each wait for a frame; it is a failure bound, never a
// timing assertion.
const imTimeout = 30 * time.Second

// gatewayOf serves a gateway of st whose new conversations start agentID.
func gatewayOf(t *testing.T, e *env, st *stack.Stack, agentID string, eps ...imgateway.Endpoint) (*imgateway.Gateway, string) {
	t.Helper()
	api, err := client.New(client.Config{BaseURL: "http://" + st.Addr(), PendingTimeout: -1}) // as xbot im-gateway
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
