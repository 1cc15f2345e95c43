package systemtest_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
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

// mcpFailures collects the mcp_tool_call items that failed, by tool.
func mcpFailures(t *testing.T, st *stack.Stack, runID string) map[string]events.ItemFailedPayload {
	t.Helper()
	tools := map[string]string{} // item id → tool on its server
	for _, ev := range eventsOf(t, st, runID, events.ItemStarted) {
		if p := payloadOf[events.ItemStartedPayload](t, ev); p.ItemType == events.ItemMCPToolCall {
			tools[ev.ItemID] = dataOf[events.ToolCallData](t, p.Data).MCP.Tool
		}
	}
	out := map[string]events.ItemFailedPayload{}
	for _, ev := range eventsOf(t, st, runID, events.ItemFailed) {
		if name, ok := tools[ev.ItemID]; ok {
			out[name] = payloadOf[events.ItemFailedPayload](t, ev)
		}
	}
	return out
}

func TestMCPCallsCancelledTimedOutAndCrashedFailTheirItemsOnly(t *testing.T) {
	t.Parallel()
	dir := t.TempDir() // before the server: removed after it closed
	remote, _ := remoteServer(t)
	slow := remote
	slow.Name, slow.CallTimeout = "slow", 300*time.Millisecond
	wait, held := filepath.Join(dir, "wait"), filepath.Join(dir, "held")
	flaky := profile.Profile{ID: "flaky", Model: profile.ModelScripted, MCPServers: []profile.MCPServer{slow, stdioServer()},
		Script: []profile.Turn{
			{ToolCalls: call1("slow__wait", fmt.Sprintf(`{"file":%q}`, wait))},
			{ToolCalls: call1("local__crash", `{}`)},
			{ToolCalls: call1("local__echo", `{"text":"the server is back"}`)},
			{Text: "done"},
		}}
	patient := profile.Profile{ID: "patient", Model: profile.ModelScripted, MCPServers: []profile.MCPServer{remote},
		Script: []profile.Turn{{ToolCalls: call1("remote__wait", fmt.Sprintf(`{"file":%q}`, held))}, {Text: "never"}}}
	e, st, reqs := mcpEnv(t, flaky, patient)
	runID := runUntil(t, st, "flaky", "go", "flaky-1", "completed", 30*time.Second)
	failed := mcpFailures(t, st, runID)
	if f := failed["wait"]; f.ErrorCode != events.ToolErrTimedOut || !strings.Contains(f.Message, "300ms") {
		t.Errorf("the call past its timeout failed %+v", f)
	}
	// On a loaded machine the call may not reach the server within its 300 ms;
	// then nothing is left to cancel there (the mcp package's test of the
	// timeout waits until it does).
	if _, err := os.Stat(wait); err == nil {
		if err := waitLines(wait, "started", "cancelled"); err != nil {
			t.Errorf("the server did not see the timed-out call cancelled: %v", err)
		}
	}
	if f := failed["crash"]; f.ErrorCode != events.ToolErrToolError || !strings.Contains(f.Message, "exit status 3") ||
		!strings.Contains(f.Message, "crashing on purpose") {
		t.Errorf("the call whose server crashed failed %+v", f)
	}
	last := conversation(reqs.of("flaky")[3].Messages)
	if !slices.ContainsFunc(last, func(m string) bool { return strings.Contains(m, "the server is back") }) {
		t.Errorf("the call after the crash did not reach a new server process: %q", last)
	}

	// A cancel while a call runs: the server is told, the item closes cancelled.
	runID = create(t, st, "patient", "go", "patient-1").RunID
	waitFor(t, held, 1, "the patient run's call started")
	cancelRun(t, st, runID, "enough", "patient-1-cancel")
	waitStatus(t, st, runID, "cancelled", 20*time.Second)
	if f := mcpFailures(t, st, runID)["wait"]; f.ErrorCode != events.ToolErrCancelled {
		t.Errorf("the call of the cancelled run failed %+v", f)
	}
	if err := waitLines(held, "started", "cancelled"); err != nil {
		t.Errorf("the server did not see the cancelled call cancelled: %v", err)
	}
	e.invariants(st)
}

func TestMCPServerThatCannotBeListedFailsTheStartUnlessOptional(t *testing.T) {
	t.Parallel()
	gone := profile.MCPServer{Name: "gone", URL: "http://127.0.0.1:1/mcp", StartTimeout: 2 * time.Second}
	optional := gone
	optional.Optional = true
	strict := profile.Profile{ID: "strict", Model: profile.ModelScripted, MCPServers: []profile.MCPServer{gone},
		Script: []profile.Turn{{Text: "never"}}}
	lenient := profile.Profile{ID: "lenient", Model: profile.ModelScripted, MCPServers: []profile.MCPServer{optional},
		Script: []profile.Turn{{Text: "fine without it"}}}
	e, st, _ := mcpEnv(t, strict, lenient)
	runID := runUntil(t, st, "strict", "go", "strict-1", "failed", 20*time.Second)
	f := payloads[events.RunFailedPayload](t, st, runID)
	if len(f) != 1 || f[0].ErrorCode != events.FailCapabilityUnavailable || !strings.Contains(f[0].Message, "MCP server gone") {
		t.Errorf("the strict run failed %+v", f)
	}
	runID = runUntil(t, st, "lenient", "go", "lenient-1", "completed", 20*time.Second)
	snap, err := apiOf(t, st).GetRunSnapshot(t.Context(), runID)
	if err != nil {
		t.Fatal(err)
	}
	var frozen profile.Snapshot
	if err := json.Unmarshal(snap.Snapshot, &frozen); err != nil {
		t.Fatal(err)
	}
	if len(frozen.MCPServers) != 1 || frozen.MCPServers[0].Skipped == "" || len(frozen.MCPServers[0].Tools) != 0 {
		t.Errorf("the optional server in the snapshot: %+v", frozen.MCPServers)
	}
	e.invariants(st)
}

// waitFor waits until file has n "started" lines.
func waitFor(t *testing.T, file string, n int, what string) {
	t.Helper()
	eventually.Succeeds(t, 20*time.Second, what, func() error {
		raw, _ := os.ReadFile(file)
		if got := strings.Count(string(raw), "started\n"); got < n {
			return fmt.Errorf("%d calls started", got)
		}
		return nil
	})
}

// waitLines waits (bounded) until file holds exactly lines.
func waitLines(file string, lines ...string) error {
	want := strings.Join(lines, "\n") + "\n"
	return eventually.Wait(10*time.Second, func() error {
		if raw, _ := os.ReadFile(file); string(raw) != want {
			return fmt.Errorf("%s holds %q, want %q", file, raw, want)
		}
		return nil
	})
}

// hungServer accepts connections and never answers; accepted and closed
// report each connection accepted and each one the client closed.
func hungServer(t *testing.T) (url string, accepted, closed <-chan struct{}) {
	t.Helper()
	ln, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	acc, cl := make(chan struct{}, 16), make(chan struct{}, 16)
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			acc <- struct{}{}
			go func() {
				_, _ = io.Copy(io.Discard, conn) // until the client closes it
				_ = conn.Close()
				cl <- struct{}{}
			}()
		}
	}()
	return "http://" + ln.Addr().String() + "/mcp", acc, cl
}

func TestRunCancelledWhileItsMCPServerIsConnectedStopsConnecting(t *testing.T) {
	t.Parallel()
	url, accepted, closed := hungServer(t)
	agent := profile.Profile{ID: "hung", Model: profile.ModelScripted, Script: []profile.Turn{{Text: "never"}},
		MCPServers: []profile.MCPServer{{Name: "hung", URL: url, StartTimeout: 5 * time.Minute}}}
	e, st, _ := mcpEnv(t, agent)
	runID := create(t, st, "hung", "go", "hung-1").RunID
	eventually.Holds(t, 20*time.Second, "the executor connects to the server", func() bool { return len(accepted) > 0 })
	if len(closed) > 0 {
		t.Fatal("a connection to the server closed before the cancel")
	}
	cancelRun(t, st, runID, "taking too long", "hung-1-cancel")
	waitStatus(t, st, runID, "cancelled", 20*time.Second)
	// Far below the server's 5 min start timeout.
	eventually.Holds(t, 20*time.Second, "the cancelled run's engine stops waiting for the handshake", func() bool { return len(closed) > 0 })
	if n := countType(t, st, runID, events.RunStarted); n != 0 {
		t.Errorf("the cancelled run has %d runtime.run.started", n)
	}
	e.invariants(st)
}
