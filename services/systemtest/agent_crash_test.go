package systemtest_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/infra/devstack/kafkatest"
	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/services/engine/mcp/mcptest"
	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/stack"
)

// crashEnv runs the API and projector in one stack; executors are started
// separately so they can be killed.
func crashEnv(t *testing.T, agents ...profile.Profile) (*env, *stack.Stack, func(name string, hooks *kafka.Hooks) *stack.Stack) {
	t.Helper()
	e := newEnv(t).withAgents(agents...)
	comp := localCompute(t, t.TempDir())
	front := e.start("front", nil, stack.API, stack.ProjectorPostgres)
	executor := func(name string, hooks *kafka.Hooks) *stack.Stack {
		return e.startWith(name, func(o *stack.Options) {
			o.Components, o.ExecutorHooks, o.Compute = []stack.Component{stack.Executor}, hooks, comp
		})
	}
	return e, front, executor
}

// TestAgentKilledDuringModelStream kills the executor while the model
// streams; the next owner restores the run, repeats the model call, runs its
// tool call once and finishes.
func TestAgentKilledDuringModelStream(t *testing.T) {
	t.Parallel()
	count := filepath.Join(t.TempDir(), "count")
	agent := profile.Profile{ID: "streamer", Model: profile.ModelScripted, Tools: []string{"shell"}, Script: []profile.Turn{
		{Text: strings.Repeat("a long streamed answer ", 40), ChunkChars: 4, Delay: 5 * time.Millisecond,
			ToolCalls: call1("shell", fmt.Sprintf(`{"command":"echo ran >> %s"}`, count))},
		{Text: "done"},
	}}
	e, front, executor := crashEnv(t, agent)
	var killed atomic.Bool
	var victim atomic.Pointer[stack.Stack]
	// Killed in the first transaction that streams the answer after its
	// start committed: mid-stream, however the broker's speed grouped the
	// appends into transactions.
	victim.Store(executor("exA", &kafka.Hooks{BeforeCommit: func(_ int32, recs []kafka.OutRecord) {
		if kafkatest.MidStream(recs) && killed.CompareAndSwap(false, true) {
			victim.Load().Executor.Kill()
		}
	}}))
	runID := create(t, front, "streamer", "go", "kill-stream-1").RunID
	eventually.Succeeds(t, 10*time.Second, "executor A died mid-stream", func() error {
		if !killed.Load() {
			return context.DeadlineExceeded
		}
		return nil
	})
	executor("exB", nil)
	waitStatus(t, front, runID, "completed", 20*time.Second)
	e.invariants(front)
	counts := typeCounts(listEvents(t, front, runID))
	if counts[events.RunCheckpointRestored] != 1 || counts[events.ItemFailed] != 1 || counts[events.RunStarted] != 1 {
		t.Errorf("takeover not recorded as one restore closing the lost stream: %v", counts)
	}
	failed := payloads[events.ItemFailedPayload](t, front, runID)
	if len(failed) == 0 || failed[0].ErrorCode != events.ToolErrRuntimeLost || failed[0].ItemType != events.ItemAssistantMessage {
		t.Errorf("lost item %+v, want the assistant_message failed runtime_lost", failed)
	}
	if runs := readLines(t, count); runs != 1 {
		t.Errorf("the tool ran %d times, want once", runs)
	}
}

// TestAgentKilledDuringToolCall kills the executor while a tool runs; the next
// owner reports the call to the model as lost (runtime_lost) without running
// it again, and the run finishes.
func TestAgentKilledDuringToolCall(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	count, gate := filepath.Join(dir, "count"), filepath.Join(dir, "gate")
	t.Cleanup(func() { _ = os.WriteFile(gate, nil, 0o600) }) // let the orphaned tool of the dead executor end
	agent := profile.Profile{ID: "builder", Model: profile.ModelScripted, Tools: []string{"shell"}, Script: []profile.Turn{
		{ToolCalls: call1("shell", fmt.Sprintf(`{"command":"echo ran >> %s; while [ ! -f %s ]; do sleep 0.02; done"}`, count, gate))},
		{Text: "The build was interrupted; I will not repeat it blindly."},
	}}
	e, front, executor := crashEnv(t, agent)
	exA := executor("exA", nil)
	runID := create(t, front, "builder", "build", "kill-tool-1").RunID
	eventually.Succeeds(t, 10*time.Second, "the tool is running", func() error {
		if readLines(t, count) == 0 {
			return context.DeadlineExceeded
		}
		return nil
	})
	exA.Executor.Kill()
	executor("exB", nil)
	waitStatus(t, front, runID, "completed", 20*time.Second)
	e.invariants(front)
	assertLog(t, front, runID,
		"runtime.item.started:assistant_message", "runtime.item.completed:assistant_message",
		"runtime.item.started:command_execution",
		"runtime.run.checkpoint_restored", "runtime.item.failed:command_execution",
		"runtime.item.started:assistant_message", "delta+", "runtime.item.completed:assistant_message",
		"runtime.run.completed")
	if runs := readLines(t, count); runs != 1 {
		t.Errorf("the tool ran %d times, want once", runs)
	}
}

func readLines(t *testing.T, path string) int {
	t.Helper()
	raw, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(raw), "\n")
}

// TestAgentKilledDuringMCPCall kills the executor while an MCP tool call
// runs on its server; the next owner closes the item runtime_lost, tells
// the model so, does not call the tool again, and the run finishes.
func TestAgentKilledDuringMCPCall(t *testing.T) {
	t.Parallel()
	dir := t.TempDir() // before the server: removed after it closed
	url, _ := mcptest.ServeHTTP(t)
	wait, gate := filepath.Join(dir, "wait"), filepath.Join(dir, "gate")
	// The killed executor's call stays on the server (a crash would have cut
	// its connection); the gate lets it end when the test does.
	t.Cleanup(func() { _ = os.WriteFile(gate, nil, 0o600) })
	agent := profile.Profile{ID: "remote-builder", Model: profile.ModelScripted,
		MCPServers: []profile.MCPServer{{Name: "remote", URL: url}}, Script: []profile.Turn{
			{ToolCalls: call1("remote__wait", fmt.Sprintf(`{"file":%q,"gate":%q}`, wait, gate))},
			{Text: "The remote call was interrupted; I will not repeat it blindly."},
		}}
	e, front, executor := crashEnv(t, agent)
	exA := executor("exA", nil)
	runID := create(t, front, "remote-builder", "build", "kill-mcp-1").RunID
	waitFor(t, wait, 1, "the MCP call is running on its server")
	exA.Executor.Kill()
	executor("exB", nil)
	waitStatus(t, front, runID, "completed", 30*time.Second)
	e.invariants(front)
	assertLog(t, front, runID,
		"runtime.item.started:assistant_message", "runtime.item.completed:assistant_message",
		"runtime.item.started:mcp_tool_call",
		"runtime.run.checkpoint_restored", "runtime.item.failed:mcp_tool_call",
		"runtime.item.started:assistant_message", "delta+", "runtime.item.completed:assistant_message",
		"runtime.run.completed")
	if f := mcpFailures(t, front, runID)["wait"]; f.ErrorCode != events.ToolErrRuntimeLost {
		t.Errorf("the lost call failed %+v, want runtime_lost", f)
	}
	raw, _ := os.ReadFile(wait)
	if n := strings.Count(string(raw), "started\n"); n != 1 {
		t.Errorf("the MCP tool was called %d times, want once", n)
	}
}
