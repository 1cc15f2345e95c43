//go:build browser

package browser_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/websocket"

	"github.com/xbot-runtime/xbot/services/api/client"
	"github.com/xbot-runtime/xbot/services/imgateway/web"
)

// The scripted endpoint's names, as a gateway's first endpoint has them.
const (
	pageEndpoint = "sandbox-bot"
	pageOwner    = "sandbox-user"
	pageRun      = "run_page"
)

// scriptedEndpoint is a sandbox endpoint that speaks the wire protocol
// (services/imgateway/wire) from a script instead of an agent: it serves web.Files at
// /sandbox, web.HistoryHandler at /sandbox/history and a socket that
// answers a message with a reply and an approval request, the Allow
// button's action with the final answer, and the drive's "/close N" and
// "/error" with that close and an error frame. It tests the page on its own,
// without a gateway.
type scriptedEndpoint struct {
	mu       sync.Mutex
	received []string
	connects int
	answered bool
}

func (e *scriptedEndpoint) handler(t *testing.T) http.Handler {
	history, err := web.HistoryHandler(web.HistoryConfig{
		Sessions:  func(string) web.SessionReader { return e },
		SessionID: func(c web.Conversation) (string, error) { return "sbx-" + c.Type + "-" + c.ID, nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	sock := websocket.Server{Handler: e.serve, Handshake: func(_ *websocket.Config, r *http.Request) error {
		if web.Token(r) != imToken {
			return errors.New("unknown token")
		}
		return nil
	}}
	mux := http.NewServeMux()
	mux.Handle("GET /sandbox/history", history)
	mux.HandleFunc("GET /sandbox", func(w http.ResponseWriter, r *http.Request) {
		if strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
			sock.ServeHTTP(w, r)
			return
		}
		http.ServeFileFS(w, r, web.Files, web.Page)
	})
	return mux
}

func (e *scriptedEndpoint) serve(ws *websocket.Conn) {
	e.mu.Lock()
	e.connects++
	e.mu.Unlock()
	canExecute := true
	send(ws, map[string]any{"type": "ready", "id": pageOwner, "endpoint": pageEndpoint, "canExecute": canExecute,
		"workingDirectory": "/workspace", "shellIsolation": map[string]any{"available": true, "provider": "bwrap"},
		"content": text("connected to " + pageEndpoint)})
	for {
		var raw string
		if websocket.Message.Receive(ws, &raw) != nil {
			return
		}
		e.mu.Lock()
		e.received = append(e.received, raw)
		e.mu.Unlock()
		if !e.answer(ws, raw) {
			return
		}
	}
}

// answer answers one frame; false ends the connection.
func (e *scriptedEndpoint) answer(ws *websocket.Conn, raw string) bool {
	var f struct {
		Type, ID string
		Content  []web.Segment
	}
	if json.Unmarshal([]byte(raw), &f) != nil || len(f.Content) == 0 {
		return true
	}
	reply := func(id string, content []map[string]any) {
		send(ws, map[string]any{"type": f.Type, "id": f.ID, "bot": pageEndpoint, "endpoint": pageEndpoint,
			"messageId": id, "content": content, "timestamp": time.Now().UnixMilli()})
	}
	seg := f.Content[0]
	switch said, _ := seg.Data["text"].(string); {
	case seg.Type == "action" && seg.Data["id"] == "imm_2.allow":
		reply("imm_3", text("Allowed by you."))
		reply("imm_4", text(imFinal))
		e.mu.Lock()
		e.answered = true
		e.mu.Unlock()
	case said == "/close 1012":
		closeWith(ws, 1012, "service restart")
		return false
	case said == "/close 4000":
		closeWith(ws, 4000, "replaced by new sandbox client")
		return false
	case said == "/error":
		send(ws, map[string]any{"type": "error", "id": pageOwner, "endpoint": pageEndpoint,
			"content": text("this connection is a read-only demo and cannot run agent tasks")})
	case said != "":
		reply("imm_1", text(imFirst))
		reply("imm_2", append(text("shell: echo "+imToolOutput+" (deploys need a person's approval)"),
			action("imm_2.allow", "Allow"), action("imm_2.deny", "Deny")))
	}
	return true
}

func text(s string) []map[string]any {
	return []map[string]any{{"type": "text", "data": map[string]any{"text": s}}}
}

func action(id, label string) map[string]any {
	return map[string]any{"type": "action", "data": map[string]any{"id": id, "payload": id, "label": label}}
}

func send(ws *websocket.Conn, frame any) { _ = websocket.JSON.Send(ws, frame) }

// closeWith sends a close frame with code and reason (x/net/websocket's
// Close always says 1000).
func closeWith(ws *websocket.Conn, code uint16, reason string) {
	ws.PayloadType = websocket.CloseFrame
	_, _ = ws.Write(append(binary.BigEndian.AppendUint16(nil, code), reason...))
}

// ListSessionRuns is the private conversation's one run once the final
// answer was sent; other conversations have none.
func (e *scriptedEndpoint) ListSessionRuns(_ context.Context, sessionID string, _ client.RunQuery) (client.SessionRunPage, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.answered || sessionID != "sbx-private-"+pageOwner {
		return client.SessionRunPage{}, &client.Problem{Status: http.StatusNotFound}
	}
	return client.SessionRunPage{Runs: []client.Run{{RunID: pageRun, Input: client.UserInput{Content: imPrompt}}}}, nil
}

// AllItems are the run's items: the reply, the deploy with its output, the
// final answer.
func (e *scriptedEndpoint) AllItems(context.Context, string, client.Page) ([]client.Item, error) {
	out := func(s string) *string { return &s }
	return []client.Item{
		{ItemID: "itm_1", RunID: pageRun, Type: "assistant_message", Status: "completed", Output: out(imFirst), StartedSeq: 3, UpdatedSeq: 5},
		{ItemID: "itm_2", RunID: pageRun, Type: "command_execution", Status: "completed", ToolName: "shell",
			Input: `{"command":"echo ` + imToolOutput + `"}`, Output: out(imToolOutput + "\n"), StartedSeq: 6, UpdatedSeq: 9},
		{ItemID: "itm_3", RunID: pageRun, Type: "assistant_message", Status: "completed", Output: out(imFinal), StartedSeq: 10, UpdatedSeq: 12},
	}, nil
}

// TestSandboxPageInABrowser drives the chat page in headless Chromium
// against the scripted endpoint: the same chat as TestIMChatInABrowser, a
// message in another conversation, a close 1012 the page reconnects after on its own, an error frame, and a
// close 4000 after which it waits for a click on Reconnect.
func TestSandboxPageInABrowser(t *testing.T) {
	chromium := chromiumPath(t)
	dir := imDriveDir(t)
	ep := &scriptedEndpoint{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: ep.handler(t), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })

	page := "http://" + ln.Addr().String() + "/sandbox?token=" + imToken
	res := runIMDrive(t, dir, chromium, imArtifactsDir(t, "sandbox-page"), "--url", page, "--prompt", imPrompt,
		"--allow", imAllow, "--final", imFinal, "--tool-output", imToolOutput, "--closes")

	if res.Ready.Endpoint != pageEndpoint || res.Ready.CanExecute != "yes" || !strings.Contains(res.Ready.ShellIsolation, "bwrap") {
		t.Errorf("the page shows the ready frame as %+v", res.Ready)
	}
	checkSentFrames(t, res.Sent)
	checkArrival(t, res)
	checkHistory(t, res)
	checkCloses(t, res)
	var group struct{ Type, ID string }
	if err := json.Unmarshal([]byte(res.GroupSent), &group); err != nil || group.Type != "group" || group.ID != "team" || !res.PrivateHidden {
		t.Errorf("in the group conversation the page sent %q (%v), private hidden %v", res.GroupSent, err, res.PrivateHidden)
	}
	ep.mu.Lock()
	defer ep.mu.Unlock()
	// The first load, the reload, the reconnect after 1012 and the click on
	// Reconnect after 4000: no connection of its own after 4000.
	if ep.connects != 4 {
		t.Errorf("the page connected %d times, want 4", ep.connects)
	}
}

// checkCloses: each close shows its code and reason; after 1012 the page
// says it reconnects and does, after 4000 it does not until asked.
func checkCloses(t *testing.T, res imDrive) {
	t.Helper()
	if len(res.Statuses) != 4 {
		t.Fatalf("statuses %q", res.Statuses)
	}
	if s := res.Statuses[0]; !strings.HasPrefix(s, "closed 1012 service restart; reconnecting in") {
		t.Errorf("after close 1012 the page says %q", s)
	}
	if s := res.Statuses[2]; s != "closed 4000 replaced by new sandbox client" {
		t.Errorf("after close 4000 the page says %q, want the code and reason and no reconnect", s)
	}
	if res.Statuses[1] != "ready" || res.Statuses[3] != "ready" {
		t.Errorf("statuses %q, want ready after the reconnect and after the click", res.Statuses)
	}
	if !strings.Contains(res.Error, "read-only demo") {
		t.Errorf("the error frame shows as %q", res.Error)
	}
}
