package systemtest_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/services/engine/compute"
	"github.com/xbot-runtime/xbot/services/engine/mcp/mcptest"
	"github.com/xbot-runtime/xbot/services/engine/model"
	"github.com/xbot-runtime/xbot/services/engine/model/scripted"
	"github.com/xbot-runtime/xbot/services/engine/policy"
	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/stack"
)

// The MCP reference server from npm (@modelcontextprotocol/server-everything,
// pinned in services/engine/mcp/mcptest/everything) inside bwrap over stdio
// and over streamable HTTP, and the test's Go SDK server with a secret
// header: a run lists them into its snapshot, calls them, asks for and is
// denied calls by policy, times a call out and cancels one; the secret is
// nowhere a model, a sandbox or an operator's tooling could read it.

// referenceAgent is an agent of both reference servers (stdio in the
// sandbox, whose /opt/mcp is the installed package; streamable HTTP), the
// remote Go server, and the shell.
func referenceAgent(t *testing.T, remote profile.MCPServer, turns ...profile.Turn) profile.Profile {
	t.Helper()
	dir, script := mcptest.Everything(t)
	rel, err := filepath.Rel(dir, script)
	if err != nil {
		t.Fatal(err)
	}
	stdio := []string{"node", filepath.Join("/opt/mcp", rel), "stdio"}
	return profile.Profile{ID: "ref", Model: profile.ModelScripted, Tools: []string{"shell"},
		MCPServers: []profile.MCPServer{
			{Name: "everything", Command: stdio, CallTimeout: 5 * time.Second},
			{Name: "patient", Command: stdio},
			{Name: "web", URL: mcptest.ServeEverything(t, "streamableHttp")},
			remote,
		},
		Sandbox: profile.Sandbox{Mounts: []compute.ReadOnlyMount{{Source: dir, Target: "/opt/mcp"}}},
		Policy: policy.Config{NoDefaults: true, Rules: []policy.Rule{
			{ID: "no-gzip", Server: "everything", Tool: "gzip-file-as-resource", Action: policy.Deny},
			{ID: "sums-ask", Server: "everything", Tool: "get-sum", Action: policy.RequireApproval},
		}},
		Script: turns}
}

// secretScan records where the secret was found while the run's MCP
// servers ran: the host's process list and environments.
type secretScan struct {
	mu       sync.Mutex
	scanned  int
	foundIn  []string
	procSeen int
}

// scan reads every process's command line and environment it may read.
func (s *secretScan) scan() {
	entries, _ := os.ReadDir("/proc")
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scanned++
	for _, e := range entries {
		for _, f := range []string{"cmdline", "environ"} {
			raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), f))
			if err != nil {
				continue
			}
			s.procSeen++
			if bytes.Contains(raw, []byte(mcpSecret)) {
				s.foundIn = append(s.foundIn, "/proc/"+e.Name()+"/"+f)
			}
		}
	}
}

func TestMCPReferenceServerInBwrapAndTheSecretStaysOut(t *testing.T) {
	t.Parallel()
	remote, headers := remoteServer(t)
	agent := referenceAgent(t, remote,
		profile.Turn{ToolCalls: []profile.ScriptedCall{
			{Name: "everything__echo", Arguments: `{"message":"from the sandbox"}`},
			{Name: "web__echo", Arguments: `{"message":"over http"}`},
			{Name: "everything__get-tiny-image", Arguments: `{}`},
			{Name: "everything__get-env", Arguments: `{}`},
			{Name: "remote__headers", Arguments: `{}`},
			{Name: "shell", Arguments: `{"command":"env; ps -eo args"}`},
			{Name: "everything__gzip-file-as-resource", Arguments: `{"name":"x","data":"data:text/plain,x"}`},
			{Name: "everything__get-sum", Arguments: `{"a":1,"b":2}`},
		}},
		profile.Turn{ToolCalls: call1("everything__trigger-long-running-operation", `{"duration":30,"steps":30}`)},
		profile.Turn{Text: "done"})
	scan := &secretScan{}
	logs, logged := observer.New(zapcore.DebugLevel)
	e := newEnv(t)
	st, _ := bwrapAgentEnv(t, e, func(o *stack.Options) {
		o.MCPSecrets = map[string]string{"TOKEN": mcpSecret}
		o.Logger = zap.New(logs)
		o.Models = func(p profile.Profile) (model.Provider, string, error) {
			return &scripted.Provider{Script: p.Script, Observe: func(model.Request) { scan.scan() }}, profile.ModelScripted, nil
		}
	}, agent)
	runID := create(t, st, "ref", "go", "ref-1").RunID
	waitStatus(t, st, runID, "paused", 60*time.Second)
	approveAll(t, st, runID)
	waitStatus(t, st, runID, "completed", 60*time.Second)
	e.invariants(st)
	checkReferenceRun(t, st, runID)
	if len(headers.All()) == 0 {
		t.Error("the remote server was never called")
	}
	raw, err := json.Marshal(listEvents(t, st, runID))
	if err != nil {
		t.Fatal(err)
	}
	where := map[string]bool{"the run's events": bytes.Contains(raw, []byte(mcpSecret))}
	for _, entry := range logged.All() {
		line, _ := json.Marshal(entry.ContextMap())
		where["the logs"] = where["the logs"] || strings.Contains(entry.Message+string(line), mcpSecret)
	}
	scan.mu.Lock()
	defer scan.mu.Unlock()
	where["the process list and environments"] = len(scan.foundIn) > 0
	if scan.scanned < 3 || scan.procSeen == 0 {
		t.Fatalf("the process list was scanned %d times (%d files read)", scan.scanned, scan.procSeen)
	}
	for place, found := range where {
		if found {
			t.Errorf("the secret is in %s %v", place, scan.foundIn)
		}
	}
}

// checkReferenceRun checks what the reference run's calls recorded.
func checkReferenceRun(t *testing.T, st *stack.Stack, runID string) {
	t.Helper()
	out := map[string]string{}
	for _, p := range payloads[events.ItemCompletedPayload](t, st, runID) {
		if p.ItemType == events.ItemMCPToolCall || p.ItemType == events.ItemCommandExecution {
			r := dataOf[events.ToolResultData](t, p.Data)
			out[r.ToolName] = r.Output
			if r.MCP != nil && r.ToolName == "everything__get-tiny-image" && !bytes.Contains(r.MCP.Content[1], []byte(`"data":"iVBOR`)) {
				t.Errorf("the tiny image was not kept: %s", r.MCP.Content)
			}
		}
	}
	for tool, want := range map[string]string{"everything__echo": "from the sandbox", "web__echo": "over http",
		"everything__get-env": `"HOME": "/workspace"`, "shell": "HOME=/workspace", "everything__get-sum": "3",
		"remote__headers": "Authorization: Bearer [redacted]"} {
		if !strings.Contains(out[tool], want) {
			t.Errorf("%s returned %q, want it to hold %q", tool, out[tool], want)
		}
	}
	failed := mcpFailures(t, st, runID)
	if f := failed["gzip-file-as-resource"]; f.ErrorCode != events.ToolErrBlockedByPolicy || f.RuleID != "no-gzip" {
		t.Errorf("the call policy denies failed %+v", f)
	}
	if f := failed["trigger-long-running-operation"]; f.ErrorCode != events.ToolErrTimedOut {
		t.Errorf("the call past its timeout failed %+v", f)
	}
}

func TestMCPReferenceServerCallCancelledMidCall(t *testing.T) {
	t.Parallel()
	remote, _ := remoteServer(t)
	agent := referenceAgent(t, remote,
		profile.Turn{ToolCalls: call1("patient__trigger-long-running-operation", `{"duration":60,"steps":60}`)},
		profile.Turn{Text: "never"})
	e := newEnv(t)
	st, _ := bwrapAgentEnv(t, e, func(o *stack.Options) { o.MCPSecrets = map[string]string{"TOKEN": mcpSecret} }, agent)
	runID := create(t, st, "ref", "go", "ref-cancel").RunID
	eventually.Succeeds(t, 60*time.Second, "the long operation reports progress", func() error {
		for _, d := range payloads[events.ItemDeltaPayload](t, st, runID) {
			if strings.HasPrefix(d.Delta, "progress 1/60") {
				return nil
			}
		}
		return fmt.Errorf("no progress yet")
	})
	cancelRun(t, st, runID, "long enough", "ref-cancel-c")
	waitStatus(t, st, runID, "cancelled", 30*time.Second)
	if f := mcpFailures(t, st, runID)["trigger-long-running-operation"]; f.ErrorCode != events.ToolErrCancelled {
		t.Errorf("the cancelled call failed %+v", f)
	}
	e.invariants(st)
}
