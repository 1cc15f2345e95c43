package systemtest_test

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/engine/mcp/mcptest"
	"github.com/xbot-runtime/xbot/services/engine/model"
	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/stack"
)

// The end-to-end tests of MCP tools (issue 19): servers listed into a run's
// snapshot when it starts, their calls recorded as mcp_tool_call items and
// governed by policy like built-in tools. The servers: one built with the
// official Go SDK here (mcptest), over streamable HTTP and — as this test
// binary, re-executed — over stdio in the run's sandbox; the reference
// server from npm in mcp_reference_test.go.

// mcpSecret is the value of the secret TOKEN the remote server's header names.
const mcpSecret = "xbot-mcp-secret-7c1e94b2d3a6f058"

// mcpEnv is agentEnv with the MCP secret held by the executor.
func mcpEnv(t *testing.T, agents ...profile.Profile) (*env, *stack.Stack, *requests) {
	t.Helper()
	e := newEnv(t).withAgents(agents...)
	comp := localCompute(t, t.TempDir())
	reqs := &requests{got: map[string][]model.Request{}}
	st := e.startWith("all", func(o *stack.Options) {
		o.Compute, o.Models, o.MCPSecrets = comp, reqs.resolver, map[string]string{"TOKEN": mcpSecret}
	})
	return e, st, reqs
}

// remoteServer is the Go SDK test server over streamable HTTP, its header
// naming the secret TOKEN.
func remoteServer(t *testing.T) (profile.MCPServer, *mcptest.HeaderLog) {
	t.Helper()
	url, log := mcptest.ServeHTTP(t)
	return profile.MCPServer{Name: "remote", URL: url, Headers: map[string]string{"Authorization": "Bearer ${TOKEN}"}}, log
}

// stdioServer is the Go SDK test server over stdio: this test binary, run
// in the run's sandbox.
func stdioServer() profile.MCPServer {
	return profile.MCPServer{Name: "local", Command: []string{os.Args[0], mcptest.StdioArg}}
}

func TestMCPToolsAreFrozenIntoTheSnapshotAndCalledAsItems(t *testing.T) {
	t.Parallel()
	remote, headers := remoteServer(t)
	agent := profile.Profile{ID: "mcp", Model: profile.ModelScripted, MCPServers: []profile.MCPServer{remote, stdioServer()},
		Script: []profile.Turn{
			{ToolCalls: []profile.ScriptedCall{{Name: "remote__echo", Arguments: `{"text":"hello over http"}`},
				{Name: "local__structured", Arguments: `{}`}, {Name: "remote__image", Arguments: `{"bytes":100}`}}},
			{Text: "done"},
		}}
	e, st, reqs := mcpEnv(t, agent)
	runID := runUntil(t, st, "mcp", "go", "mcp-1", "completed", 30*time.Second)
	e.invariants(st)
	snap, err := apiOf(t, st).GetRunSnapshot(t.Context(), runID)
	if err != nil {
		t.Fatal(err)
	}
	var frozen profile.Snapshot
	if err := json.Unmarshal(snap.Snapshot, &frozen); err != nil {
		t.Fatal(err)
	}
	if len(frozen.MCPServers) != 2 || frozen.MCPServers[0].ServerName != mcptest.Name ||
		frozen.MCPServers[0].ServerVersion != mcptest.Version || len(frozen.MCPServers[1].Tools) != len(mcptest.Tools) {
		t.Fatalf("snapshot's MCP servers %+v", frozen.MCPServers)
	}
	if strings.Contains(string(snap.Snapshot), mcpSecret) || !strings.Contains(string(snap.Snapshot), "Bearer ${TOKEN}") {
		t.Errorf("the snapshot holds the secret, or not its template: %s", snap.Snapshot)
	}
	offered := reqs.of("mcp")[0].Tools
	if !slices.ContainsFunc(offered, func(s model.ToolSpec) bool { return s.Name == "remote__echo" }) ||
		!slices.ContainsFunc(offered, func(s model.ToolSpec) bool { return s.Name == "local__crash" }) {
		t.Errorf("the model was offered %d tools, without the MCP tools", len(offered))
	}
	started := payloads[events.ItemStartedPayload](t, st, runID)
	var calls []events.MCPCall
	for _, p := range started {
		if p.ItemType == events.ItemMCPToolCall {
			calls = append(calls, *dataOf[events.ToolCallData](t, p.Data).MCP)
		}
	}
	slices.SortFunc(calls, func(a, b events.MCPCall) int { return strings.Compare(a.Tool, b.Tool) })
	if !slices.Equal(calls, []events.MCPCall{{Server: "remote", Tool: "echo"}, {Server: "remote", Tool: "image"},
		{Server: "local", Tool: "structured"}}) { // the calls of one response run at once
		t.Errorf("mcp_tool_call items started: %+v", calls)
	}
	results := map[string]events.MCPResult{}
	for _, p := range payloads[events.ItemCompletedPayload](t, st, runID) {
		if p.ItemType == events.ItemMCPToolCall {
			r := dataOf[events.ToolResultData](t, p.Data).MCP
			results[r.Tool] = *r
		}
	}
	if string(results["structured"].StructuredContent) != `{"answer":42,"unit":"none"}` ||
		!strings.Contains(string(results["image"].Content[1]), `"type":"image"`) || results["echo"].IsError {
		t.Errorf("results %+v", results)
	}
	second := conversation(reqs.of("mcp")[1].Messages)
	if !slices.ContainsFunc(second, func(m string) bool { return strings.Contains(m, "hello over http") }) {
		t.Errorf("the model was not given echo's result: %q", second)
	}
	for _, h := range headers.All() {
		if h.Get("Authorization") != "Bearer "+mcpSecret {
			t.Fatalf("a request to the remote server carried Authorization %q", h.Get("Authorization"))
		}
	}
}
