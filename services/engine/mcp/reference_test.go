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

	"go.uber.org/zap/zaptest"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/engine/compute"
	"github.com/xbot-runtime/xbot/services/engine/compute/bwrap"
	"github.com/xbot-runtime/xbot/services/engine/compute/computetest"
	"github.com/xbot-runtime/xbot/services/engine/mcp"
	"github.com/xbot-runtime/xbot/services/engine/mcp/mcptest"
	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/engine/tools"
)

// The MCP reference server (@modelcontextprotocol/server-everything, pinned
// in mcptest/everything) over stdio inside bwrap and over streamable HTTP.

// bwrapSandbox is a bwrap sandbox whose /opt/mcp is dir, read-only; the test
// is skipped where bwrap cannot run (a failure on CI).
func bwrapSandbox(t *testing.T, dir string) compute.Sandbox {
	t.Helper()
	p, err := bwrap.New(bwrap.Config{Dir: computetest.Dir(t), Logger: zaptest.NewLogger(t)})
	if errors.Is(err, compute.ErrUnavailable) {
		if os.Getenv("CI") == "true" {
			t.Fatalf("bwrap unavailable on CI: %v", err)
		}
		t.Skipf("bwrap unavailable: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	sb, err := p.Open(context.Background(), compute.Spec{Key: compute.Key{TenantID: "t", WorkspaceID: "w", AgentID: "a", OwnerID: "o"},
		RunID: "run_1", Env: []string{"VISIBLE=yes"}, ReadOnlyMounts: []compute.ReadOnlyMount{{Source: dir, Target: "/opt/mcp"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sb.Close() })
	return sb
}

func TestReferenceServerOverStdioInsideBwrap(t *testing.T) {
	t.Parallel()
	dir, script := mcptest.Everything(t)
	rel, err := filepath.Rel(dir, script)
	if err != nil {
		t.Fatal(err)
	}
	sb := bwrapSandbox(t, dir)
	srv := profile.MCPServer{Name: "everything", Command: []string{"node", filepath.Join("/opt/mcp", rel), "stdio"}}
	e := env(t)
	e.Sandbox = func(context.Context) (compute.Sandbox, error) { return sb, nil }
	set := mcp.NewSet([]profile.MCPServer{srv}, e)
	t.Cleanup(set.Close)
	snap, err := mcp.List(context.Background(), set, srv)
	if err != nil {
		t.Fatal(err)
	}
	if snap.ServerName == "" || snap.ServerVersion == "" || len(snap.Tools) < 10 {
		t.Fatalf("the reference server's snapshot: %+v", snap)
	}
	res := tool(t, set, srv, "echo", 16<<10).Run(context.Background(), tools.Call{Arguments: json.RawMessage(`{"message":"inside"}`)})
	if !strings.Contains(res.Output, "inside") {
		t.Fatalf("echo = %+v", res)
	}
	img := tool(t, set, srv, "get-tiny-image", 16<<10).Run(context.Background(), tools.Call{Sandbox: sb, ItemID: "itm_img", Arguments: json.RawMessage(`{}`)})
	if !slices.ContainsFunc(img.MCP.Content, func(b json.RawMessage) bool {
		return strings.Contains(string(b), `"type":"image"`) && strings.Contains(string(b), `"data":"iVBOR`)
	}) {
		t.Fatalf("tiny image kept as %s", img.MCP.Content)
	}
	envRes := tool(t, set, srv, "get-env", 16<<10).Run(context.Background(), tools.Call{Arguments: json.RawMessage(`{}`)})
	if !strings.Contains(envRes.Output, `"VISIBLE": "yes"`) || strings.Contains(envRes.Output, secret) || strings.Contains(envRes.Output, "XBOT_") {
		t.Fatalf("the server's environment inside the sandbox: %s", envRes.Output)
	}
}

func TestReferenceServerOverStreamableHTTP(t *testing.T) {
	t.Parallel()
	srv := profile.MCPServer{Name: "everything", URL: mcptest.ServeEverything(t, "streamableHttp")}
	set := mcp.NewSet([]profile.MCPServer{srv}, env(t))
	t.Cleanup(set.Close)
	res := tool(t, set, srv, "get-structured-content", 16<<10).Run(context.Background(), tools.Call{Arguments: json.RawMessage(`{"location":"Chicago"}`)})
	if !strings.Contains(string(res.MCP.StructuredContent), `"temperature"`) {
		t.Fatalf("structured content %+v", res.MCP)
	}
	var progress []string
	ctx, cancel := context.WithCancel(context.Background())
	long := tool(t, set, srv, "trigger-long-running-operation", 16<<10)
	res = long.Run(ctx, tools.Call{Arguments: json.RawMessage(`{"duration":60,"steps":60}`), Output: func(_, s string) {
		progress = append(progress, s)
		cancel() // cancel after the first progress notification
	}})
	if res.ErrorCode != events.ToolErrCancelled || len(progress) == 0 || !strings.HasPrefix(progress[0], "progress 1/60") {
		t.Fatalf("cancelled long operation = %+v, progress %q", res, progress)
	}
}
