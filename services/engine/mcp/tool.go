package mcp

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/engine/compute"
	"github.com/xbot-runtime/xbot/services/engine/model"
	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/engine/tools"
)

// Tool is one tool of a run's MCP server as the agent loop runs it
// (tools.Tool): its spec is the one the run's snapshot froze, and a call
// goes to the server through the execution's Set.
type Tool struct {
	set    *Set
	server profile.MCPServer
	tool   profile.MCPTool
	// keep is the run's offload threshold: content above it is stored in
	// the run's output directory instead of the log.
	keep int
}

var _ tools.Tool = (*Tool)(nil)

// NewTool returns the tool t of server, called through set; results keep
// at most keep bytes of a block in the log (the profile's offloadBytes).
func NewTool(set *Set, server profile.MCPServer, t profile.MCPTool, keep int) *Tool {
	return &Tool{set: set, server: server, tool: t, keep: keep}
}

// Spec implements tools.Tool.
func (t *Tool) Spec() model.ToolSpec { return t.tool.Spec() }

// ItemType implements tools.Tool.
func (t *Tool) ItemType() events.ItemType { return events.ItemMCPToolCall }

// Call names the server and the tool's own name, for the item's start.
func (t *Tool) Call() events.MCPCall { return events.MCPCall{Server: t.server.Name, Tool: t.tool.Tool} }

// Run implements tools.Tool: it calls the tool on its server within the
// server's callTimeout. Progress notifications stream as output. A call
// whose ctx ends is cancelled on the server (notifications/cancelled) and
// fails cancelled; one past its timeout fails timed_out; one whose server
// stopped fails tool_error, and the next call starts the server again.
func (t *Tool) Run(ctx context.Context, call tools.Call) tools.Result {
	start := time.Now()
	conn, err := t.set.Conn(ctx, t.server.Name)
	if err != nil {
		if ctx.Err() != nil {
			return tools.Failed(events.ToolErrCancelled, "the call was cancelled before the MCP server was reached")
		}
		return tools.Failed(errorCode(err), t.set.Secrets().Scrub(err.Error()))
	}
	timeout := t.server.CallTimeoutOrDefault()
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var progress func(string)
	if call.Output != nil {
		progress = func(s string) { call.Output("progress", t.set.Secrets().Scrub(s)) }
	}
	res, err := conn.Call(cctx, t.tool.Tool, call.Arguments, progress)
	switch {
	case err == nil:
		return t.result(ctx, call, res, time.Since(start))
	case ctx.Err() != nil:
		return tools.Failed(events.ToolErrCancelled,
			"the call was cancelled; the MCP server was sent notifications/cancelled for it")
	case errors.Is(err, context.DeadlineExceeded):
		return tools.Failed(events.ToolErrTimedOut, fmt.Sprintf(
			"MCP server %s did not answer within %s; the call was cancelled (notifications/cancelled)", t.server.Name, timeout))
	}
	return tools.Failed(errorCode(err), fmt.Sprintf("MCP server %s, tool %s: %s",
		t.server.Name, t.tool.Tool, t.set.Secrets().Scrub(err.Error())))
}

// errorCode is the tool error of a call that failed with err: sandbox_error
// when the run's sandbox was lost under a stdio server (the run then fails
// too), else tool_error.
func errorCode(err error) string {
	if errors.Is(err, compute.ErrSandboxLost) {
		return events.ToolErrSandboxError
	}
	return events.ToolErrToolError
}

// Remote reports whether the tool's server is remote: its calls need the
// run's sandbox only to store large results.
func (t *Tool) Remote() bool { return t.server.TransportOrDefault() != profile.TransportStdio }
