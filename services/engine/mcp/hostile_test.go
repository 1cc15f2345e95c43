package mcp_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/redact"
	"github.com/xbot-runtime/xbot/services/engine/mcp"
	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/engine/tools"
)

// The hostile server: a streamable HTTP MCP server written here, answering
// each request with a JSON body of its own making, to give the client what
// the Go SDK's server never sends — duplicate or malformed tool names,
// results of any size.

// rpcRequest is the part of a JSON-RPC request the hostile server reads.
type rpcRequest struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
}

// answer writes a JSON-RPC response with result.
func answer(w http.ResponseWriter, id json.RawMessage, result any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
}

// serveHostile serves the handshake and answers each method of methods
// (tools/list, tools/call) with its function; it returns the endpoint.
func serveHostile(t *testing.T, methods map[string]func(w http.ResponseWriter, id json.RawMessage)) string {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed) // no standalone stream; a DELETE ends nothing
			return
		}
		var req rpcRequest
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		switch {
		case len(req.ID) == 0: // a notification
			w.WriteHeader(http.StatusAccepted)
		case req.Method == "initialize":
			answer(w, req.ID, map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]any{"name": "hostile", "version": "0"}})
		case methods[req.Method] != nil:
			methods[req.Method](w, req.ID)
		default:
			w.Header().Set("Content-Type", "application/json")
			_, _ = fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no method %s"}}`, req.ID, req.Method)
		}
	}))
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}

// listing answers tools/list with tools.
func listing(tools ...map[string]any) map[string]func(http.ResponseWriter, json.RawMessage) {
	return map[string]func(http.ResponseWriter, json.RawMessage){"tools/list": func(w http.ResponseWriter, id json.RawMessage) {
		answer(w, id, map[string]any{"tools": tools})
	}}
}

// namedTool is a tool of the hostile server.
func namedTool(name string) map[string]any {
	return map[string]any{"name": name, "inputSchema": map[string]any{"type": "object"}}
}

func TestToolNamesAServerMustNotListFailItsListing(t *testing.T) {
	t.Parallel()
	for name, tools := range map[string][]map[string]any{
		"twice":    {namedTool("dup"), namedTool("dup")},
		"control":  {namedTool("clear\x1b[2Jscreen")},
		"bidi":     {namedTool("safe\u202eexe.tab")},
		"secret":   {namedTool("x-" + secret)},
		"empty":    {namedTool("")},
		"too long": {namedTool(strings.Repeat("n", 129))},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := profile.MCPServer{Name: "h", URL: serveHostile(t, listing(tools...))}
			set := mcp.NewSet([]profile.MCPServer{srv}, env(t))
			t.Cleanup(set.Close)
			snap, err := mcp.List(context.Background(), set, srv)
			if err == nil || strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), "MCP server h") {
				t.Fatalf("List = %+v, %v; want an error naming the server and no secret", snap, err)
			}
		})
	}
}

func TestLabelsAServerSendsAreCleanedAndBounded(t *testing.T) {
	t.Parallel()
	tool := namedTool("ok")
	tool["title"] = "Title\x1b]0;owned\x07 " + secret + strings.Repeat("t", 1000)
	srv := profile.MCPServer{Name: "h", URL: serveHostile(t, listing(tool))}
	set := mcp.NewSet([]profile.MCPServer{srv}, env(t))
	t.Cleanup(set.Close)
	snap, err := mcp.List(context.Background(), set, srv)
	if err != nil {
		t.Fatal(err)
	}
	title := snap.Tools[0].Title
	if strings.ContainsAny(title, "\x1b\x07") || strings.Contains(title, secret) || len(title) > 300 ||
		!strings.HasPrefix(title, "Title]0;owned [redacted]") {
		t.Fatalf("title %q", title)
	}
}

// htmlSecret holds what JSON escapes: a server that echoes it back gets it
// into JSON text escaped (\u003c, \"), where it is to be found too.
const htmlSecret = `tok<en>&"quoted"\path-0123456789`

func TestASecretEchoedInAnyFieldOfAResultStaysOut(t *testing.T) {
	t.Parallel()
	echoed := map[string]any{"content": []any{
		map[string]any{"type": "text", "text": "fine", "_meta": map[string]any{"echo": htmlSecret}},
		map[string]any{"type": "image", "mimeType": "image/" + htmlSecret, "data": base64.StdEncoding.EncodeToString([]byte("png " + htmlSecret)),
			"annotations": map[string]any{"lastModified": htmlSecret}},
		map[string]any{"type": "resource", "resource": map[string]any{"uri": "file:///x", "mimeType": "application/octet-stream",
			"blob": base64.StdEncoding.EncodeToString([]byte(strings.Repeat("b", 4096) + htmlSecret))}},
	}, "structuredContent": map[string]any{"echo": htmlSecret}}
	methods := listing(namedTool("leaky"))
	methods["tools/call"] = func(w http.ResponseWriter, id json.RawMessage) { answer(w, id, echoed) }
	srv := profile.MCPServer{Name: "h", URL: serveHostile(t, methods)}
	e := env(t)
	e.Secrets = mcp.NewSecrets(map[string]string{"TOKEN": htmlSecret})
	set := mcp.NewSet([]profile.MCPServer{srv}, e)
	t.Cleanup(set.Close)
	sb := localSandbox(t)
	res := tool(t, set, srv, "leaky", 1024).Run(context.Background(), tools.Call{ItemID: "itm_leak", Sandbox: sb,
		Arguments: json.RawMessage(`{}`)})
	raw, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	texts := map[string]string{"the result": string(raw)}
	for _, m := range regexp.MustCompile(`"path":"([^"]+)"`).FindAllStringSubmatch(string(raw), -1) {
		data, _, err := sb.ReadFile(context.Background(), m[1], 0)
		if err != nil {
			t.Fatal(err)
		}
		texts[m[1]] = string(data)
	}
	if len(texts) < 2 {
		t.Fatalf("the large blob was not stored: %s", raw)
	}
	for where, text := range texts {
		if strings.Contains(text, `tok\u003cen\u003e`) || strings.Contains(text, "tok<en>") ||
			redact.Scrub(text, redact.All(htmlSecret)) != text {
			t.Errorf("the secret is in %s: %s", where, text)
		}
	}
}

func TestAnAnswerTooLargeFailsItsCallAndTheNextCallReconnects(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	methods := listing(namedTool("huge"))
	methods["tools/call"] = func(w http.ResponseWriter, id json.RawMessage) {
		if calls.Add(1) > 1 {
			answer(w, id, map[string]any{"content": []any{map[string]any{"type": "text", "text": "small again"}}})
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"`, id)
		chunk := []byte(strings.Repeat("a", 64<<10))
		for range 1024 { // 64 MiB, unless the client stops reading
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
		_, _ = io.WriteString(w, `"}]}}`)
	}
	srv := profile.MCPServer{Name: "h", URL: serveHostile(t, methods)}
	set := mcp.NewSet([]profile.MCPServer{srv}, env(t))
	t.Cleanup(set.Close)
	huge := tool(t, set, srv, "huge", 1024)
	res := huge.Run(context.Background(), tools.Call{Arguments: json.RawMessage(`{}`)})
	if res.ErrorCode != events.ToolErrToolError || !strings.Contains(res.Output, "larger than 16 MiB") {
		t.Fatalf("a call answered with 64 MiB = %s %.300s", res.ErrorCode, res.Output)
	}
	if res = huge.Run(context.Background(), tools.Call{Arguments: json.RawMessage(`{}`)}); res.Output != "small again" {
		t.Fatalf("the next call = %s %.300s", res.ErrorCode, res.Output)
	}
}
