package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/services/engine/compute"
	"github.com/xbot-runtime/xbot/services/engine/compute/local"
	"github.com/xbot-runtime/xbot/services/engine/mcp"
	"github.com/xbot-runtime/xbot/services/engine/mcp/mcptest"
	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/engine/tools"
)

func TestMain(m *testing.M) {
	mcptest.ServeStdioIfAsked()
	os.Exit(m.Run())
}

const secret = "s3cr3t-token-value-0123456789"

func env(t *testing.T) mcp.Env {
	t.Helper()
	return mcp.Env{Log: zaptest.NewLogger(t), Secrets: mcp.NewSecrets(map[string]string{"TOKEN": secret}), ClientVersion: "test"}
}

// tool returns the tool named name of srv, listed through set.
func tool(t *testing.T, set *mcp.Set, srv profile.MCPServer, name string, keep int) *mcp.Tool {
	t.Helper()
	snap, err := mcp.List(context.Background(), set, srv)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range snap.Tools {
		if tl.Tool == name {
			return mcp.NewTool(set, srv, tl, keep)
		}
	}
	t.Fatalf("%s lists no tool %s: %+v", srv.Name, name, snap.Tools)
	return nil
}

func TestRemoteServerIsListedAndCalledWithItsSecretHeader(t *testing.T) {
	t.Parallel()
	url, log := mcptest.ServeHTTP(t)
	srv := profile.MCPServer{Name: "remote", URL: url, Headers: map[string]string{"Authorization": "Bearer ${TOKEN}", "X-Org": "acme"}}
	set := mcp.NewSet([]profile.MCPServer{srv}, env(t))
	t.Cleanup(set.Close)
	snap, err := mcp.List(context.Background(), set, srv)
	if err != nil {
		t.Fatal(err)
	}
	if snap.ServerName != mcptest.Name || snap.ServerVersion != mcptest.Version || snap.Transport != profile.TransportHTTP ||
		len(snap.Tools) != len(mcptest.Tools) {
		t.Fatalf("snapshot %+v", snap)
	}
	echo := snap.Tools[slices.IndexFunc(snap.Tools, func(t profile.MCPTool) bool { return t.Tool == "echo" })]
	if echo.Name != "remote__echo" || !strings.Contains(string(echo.InputSchema), `"text"`) ||
		!strings.Contains(string(echo.Annotations), "readOnlyHint") {
		t.Errorf("echo %s: schema %s, annotations %s", echo.Name, echo.InputSchema, echo.Annotations)
	}
	res := tool(t, set, srv, "echo", 1<<10).Run(context.Background(), tools.Call{Arguments: json.RawMessage(`{"text":"hi"}`)})
	if res.ErrorCode != "" || res.Output != "hi" || res.MCP == nil || res.MCP.Server != "remote" || res.MCP.IsError {
		t.Fatalf("echo = %+v", res)
	}
	for _, h := range log.All() {
		if h.Get("Authorization") != "Bearer "+secret || h.Get("X-Org") != "acme" {
			t.Fatalf("a request carried %v, want the secret header and X-Org", h)
		}
	}
	// A server that echoes the secret back does not get it into the result.
	res = tool(t, set, srv, "headers", 1<<10).Run(context.Background(), tools.Call{Arguments: json.RawMessage(`{}`)})
	raw, _ := json.Marshal(res)
	if strings.Contains(string(raw), secret) || !strings.Contains(res.Output, "Authorization: Bearer [redacted]") {
		t.Fatalf("headers result %s", raw)
	}
}

func TestSSEServerIsListed(t *testing.T) {
	t.Parallel()
	url, _ := mcptest.ServeSSE(t)
	srv := profile.MCPServer{Name: "old", URL: url, Transport: profile.TransportSSE}
	set := mcp.NewSet([]profile.MCPServer{srv}, env(t))
	t.Cleanup(set.Close)
	res := tool(t, set, srv, "echo", 1<<10).Run(context.Background(), tools.Call{Arguments: json.RawMessage(`{"text":"sse"}`)})
	if res.Output != "sse" {
		t.Fatalf("echo over SSE = %+v", res)
	}
}

func TestCancelledCallIsCancelledOnTheServer(t *testing.T) {
	t.Parallel()
	url, _ := mcptest.ServeHTTP(t)
	srv := profile.MCPServer{Name: "remote", URL: url}
	set := mcp.NewSet([]profile.MCPServer{srv}, env(t))
	t.Cleanup(set.Close)
	wait := tool(t, set, srv, "wait", 1<<10)
	file := filepath.Join(t.TempDir(), "wait")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan tools.Result, 1)
	go func() { done <- wait.Run(ctx, tools.Call{Arguments: mustJSON(t, map[string]string{"file": file})}) }()
	eventually.Succeeds(t, 10*time.Second, "the call started", func() error { return hasLine(file, "started") })
	cancel()
	if res := <-done; res.ErrorCode != events.ToolErrCancelled {
		t.Fatalf("cancelled call = %+v", res)
	}
	eventually.Succeeds(t, 10*time.Second, "the server saw the cancellation", func() error { return hasLine(file, "cancelled") })
}

func TestCallPastItsTimeoutTimesOut(t *testing.T) {
	t.Parallel()
	url, _ := mcptest.ServeHTTP(t)
	// The timeout runs from the client's send: on a loaded machine the call
	// may not reach the server before it ends, and then nothing on the
	// server is left to cancel. The timeout doubles until the server saw the
	// call start in time.
	for timeout := 200 * time.Millisecond; ; timeout *= 2 {
		srv := profile.MCPServer{Name: "remote", URL: url, CallTimeout: timeout}
		set := mcp.NewSet([]profile.MCPServer{srv}, env(t))
		t.Cleanup(set.Close)
		file := filepath.Join(t.TempDir(), "wait")
		res := tool(t, set, srv, "wait", 1<<10).Run(context.Background(), tools.Call{Arguments: mustJSON(t, map[string]string{"file": file})})
		if res.ErrorCode != events.ToolErrTimedOut || !strings.Contains(res.Output, timeout.String()) {
			t.Fatalf("call past its timeout = %+v", res)
		}
		if hasLine(file, "started") != nil && timeout < time.Minute {
			continue
		}
		eventually.Succeeds(t, 10*time.Second, "the server saw the cancellation", func() error { return hasLine(file, "cancelled") })
		return
	}
}

func TestStdioServerRunsInTheSandboxAndACrashFailsOnlyItsCall(t *testing.T) {
	t.Parallel()
	sb := localSandbox(t)
	srv := profile.MCPServer{Name: "local", Command: []string{os.Args[0], mcptest.StdioArg}}
	e := env(t)
	e.Sandbox = func(context.Context) (compute.Sandbox, error) { return sb, nil }
	set := mcp.NewSet([]profile.MCPServer{srv}, e)
	t.Cleanup(set.Close)
	if res := tool(t, set, srv, "echo", 1<<10).Run(context.Background(), tools.Call{Arguments: json.RawMessage(`{"text":"x"}`)}); res.Output != "x" {
		t.Fatalf("echo over stdio = %+v", res)
	}
	res := tool(t, set, srv, "crash", 1<<10).Run(context.Background(), tools.Call{Arguments: json.RawMessage(`{}`)})
	if res.ErrorCode != events.ToolErrToolError || !strings.Contains(res.Output, "exit status 3") ||
		!strings.Contains(res.Output, "crashing on purpose") {
		t.Fatalf("crashed call = %+v", res)
	}
	// The next call starts the server again.
	if res := tool(t, set, srv, "echo", 1<<10).Run(context.Background(), tools.Call{Arguments: json.RawMessage(`{"text":"again"}`)}); res.Output != "again" {
		t.Fatalf("echo after the crash = %+v", res)
	}
}

func TestLargeImageIsStoredAndSmallImageKept(t *testing.T) {
	t.Parallel()
	url, _ := mcptest.ServeHTTP(t)
	srv := profile.MCPServer{Name: "remote", URL: url}
	set := mcp.NewSet([]profile.MCPServer{srv}, env(t))
	t.Cleanup(set.Close)
	sb := localSandbox(t)
	img := tool(t, set, srv, "image", 4<<10)
	small := img.Run(context.Background(), tools.Call{ItemID: "itm_small", Sandbox: sb, Arguments: json.RawMessage(`{"bytes":100}`)})
	if len(small.MCP.Content) != 2 || !strings.Contains(string(small.MCP.Content[1]), `"data":"`) {
		t.Fatalf("small image = %s", small.MCP.Content)
	}
	big := img.Run(context.Background(), tools.Call{ItemID: "itm_big", Sandbox: sb, Arguments: json.RawMessage(`{"bytes":20000}`)})
	var block struct {
		Type string                      `json:"type"`
		Data string                      `json:"data"`
		Meta map[string]events.OutputRef `json:"_meta"`
	}
	if err := json.Unmarshal(big.MCP.Content[1], &block); err != nil {
		t.Fatal(err)
	}
	ref := block.Meta[events.MCPOutputRefMeta]
	if block.Type != "image" || block.Data != "" || ref.Bytes != 20000 || !strings.Contains(big.Output, "stored at "+ref.Path) {
		t.Fatalf("large image block %s, output %q", big.MCP.Content[1], big.Output)
	}
	data, _, err := sb.ReadFile(context.Background(), ref.Path, 0)
	if err != nil || len(data) != 20000 {
		t.Fatalf("stored image: %d bytes, %v", len(data), err)
	}
}

func TestStructuredAndErrorResultsAreKept(t *testing.T) {
	t.Parallel()
	url, _ := mcptest.ServeHTTP(t)
	srv := profile.MCPServer{Name: "remote", URL: url}
	set := mcp.NewSet([]profile.MCPServer{srv}, env(t))
	t.Cleanup(set.Close)
	res := tool(t, set, srv, "structured", 1<<10).Run(context.Background(), tools.Call{Arguments: json.RawMessage(`{}`)})
	if string(res.MCP.StructuredContent) != `{"answer":42,"unit":"none"}` || !strings.Contains(res.Output, `"answer":42`) {
		t.Fatalf("structured result %+v (structured %s)", res, res.MCP.StructuredContent)
	}
	res = tool(t, set, srv, "fail", 1<<10).Run(context.Background(), tools.Call{Arguments: json.RawMessage(`{}`)})
	if res.ErrorCode != "" || !res.MCP.IsError || !strings.HasPrefix(res.Output, "[the tool reported an error]") {
		t.Fatalf("isError result %+v", res)
	}
}

func TestMissingSecretFailsTheConnection(t *testing.T) {
	t.Parallel()
	url, log := mcptest.ServeHTTP(t)
	srv := profile.MCPServer{Name: "remote", URL: url, Headers: map[string]string{"Authorization": "Bearer ${NOPE}"}}
	set := mcp.NewSet([]profile.MCPServer{srv}, env(t))
	t.Cleanup(set.Close)
	_, err := mcp.List(context.Background(), set, srv)
	if !errors.Is(err, mcp.ErrMissingSecret) || !strings.Contains(err.Error(), "NOPE") || len(log.All()) != 0 {
		t.Fatalf("List with a missing secret = %v (requests %d)", err, len(log.All()))
	}
}

func localSandbox(t *testing.T) compute.Sandbox {
	t.Helper()
	p, err := local.New(local.Config{Dir: t.TempDir(), Logger: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	sb, err := p.Open(context.Background(), compute.Spec{Key: compute.Key{TenantID: "t", WorkspaceID: "w", AgentID: "a", OwnerID: "o"}, RunID: "run_1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sb.Close() })
	return sb
}

func hasLine(path, line string) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if !strings.Contains(string(raw), line+"\n") {
		return errors.New("no line " + line)
	}
	return nil
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}
