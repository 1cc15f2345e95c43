package systemtest_test

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/api/client"
	"github.com/xbot-runtime/xbot/services/engine/policy"
	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/stack"
)

// The end-to-end tests of per-run options: through the HTTP API, with the
// bwrap provider, each option's effect in the sandbox and its bounds.

// unconfinedToken's principal may ask for bypass and danger-full-access.
const unconfinedToken = "tok-acme-unconfined"

// optionsEnv starts one stack with the bwrap provider, the UI streams and
// the agents, and a token of scope unconfined besides the usual ones.
func optionsEnv(t *testing.T, agents ...profile.Profile) *stack.Stack {
	t.Helper()
	e := newEnv(t)
	st, _ := bwrapAgentEnv(t, e, func(o *stack.Options) { o.Tokens[unconfinedToken] = tenant + "/ops/full+unconfined" }, agents...)
	startStreams(t, e, st)
	t.Cleanup(func() { e.invariants(st) })
	return st
}

// optionRun creates a run of agent with options o through c, waits until
// it is in status and returns its id.
func optionRun(t *testing.T, c *client.Client, agent, key, status string, o *events.RunOptions) string {
	t.Helper()
	req := client.CreateRunRequest{AgentID: agent, Input: client.UserInput{Content: "probe"}, Options: o,
		SandboxKey: &client.SandboxKeyRequest{WorkspaceID: "ws-" + key}}
	runID := createRun(t, c, req, key).RunID
	waitStatusOf(t, c, runID, status, 60*time.Second)
	return runID
}

// commandOutputs are what the run's commands printed, in order.
func commandOutputs(t *testing.T, st *stack.Stack, runID string) []string {
	t.Helper()
	var out []string
	for _, p := range payloads[events.ItemCompletedPayload](t, st, runID) {
		if exec := dataOf[events.ToolResultData](t, p.Data).Exec; p.ItemType == events.ItemCommandExecution && exec != nil {
			out = append(out, exec.Stdout+exec.Stderr)
		}
	}
	return out
}

// frozenOptions are the effective options of the run's capability snapshot.
func frozenOptions(t *testing.T, st *stack.Stack, runID string) events.RunOptions {
	t.Helper()
	frozen := payloads[events.SnapshotFrozenPayload](t, st, runID)
	if len(frozen) != 1 {
		t.Fatalf("run %s has %d capability snapshots", runID, len(frozen))
	}
	var g events.SnapshotGovernance
	if err := json.Unmarshal(frozen[0].Snapshot, &g); err != nil || g.Options == nil {
		t.Fatalf("snapshot of %s: options %v, %v", runID, g.Options, err)
	}
	return *g.Options
}

func boolp(b bool) *bool { return &b }

// startChunk is the start chunk of run runID's stream, read through c.
func startChunk(t *testing.T, c *client.Client, runID string) client.Chunk {
	t.Helper()
	for ch, err := range c.RunChunks(t.Context(), runID, client.StreamOptions{}) {
		if err != nil {
			t.Fatalf("stream of %s: %v", runID, err)
		}
		if ch.Type == client.ChunkStart {
			return ch
		}
	}
	t.Fatalf("the stream of %s has no start chunk", runID)
	return client.Chunk{}
}

// TestOptionsInTheSandbox: read-only cannot write the workspace (neither a
// command nor write_file) where the default workspace-write can; network
// off cannot connect to a listener that network on reaches; the working
// directory is the tool calls' cwd. The effective options are frozen into
// the snapshot and shown in the stream's start metadata.
func TestOptionsInTheSandbox(t *testing.T) {
	t.Parallel()
	hostIP := nonLoopbackIP(t)
	ln, err := net.Listen("tcp4", net.JoinHostPort(hostIP, "0"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for c, err := ln.Accept(); err == nil; c, err = ln.Accept() {
			_ = c.Close()
		}
	}()
	writeProbe := `test -e /workspace/by-tool.txt && echo TOOL-WROTE || echo TOOL-REFUSED; ` +
		`(echo x > /workspace/by-command.txt) 2>/dev/null && echo COMMAND-WROTE || echo COMMAND-REFUSED`
	st := optionsEnv(t,
		profile.Profile{ID: "writer", Model: profile.ModelScripted, Tools: allTools, Policy: noPolicy, Script: []profile.Turn{
			{ToolCalls: call1("write_file", `{"path":"/workspace/by-tool.txt","content":"x"}`)},
			{ToolCalls: call1("shell", fmt.Sprintf(`{"command":%q}`, writeProbe))}, {Text: "done"}}},
		profile.Profile{ID: "netprober", Model: profile.ModelScripted, Tools: allTools, Policy: noPolicy,
			Sandbox: profile.Sandbox{Network: true, AllowHosts: []string{hostIP}}, Script: []profile.Turn{
				{ToolCalls: call1("shell", fmt.Sprintf(`{"command":%q}`, probeCommand(map[string]string{"listener": ln.Addr().String()})))},
				{Text: "done"}}},
		profile.Profile{ID: "walker", Model: profile.ModelScripted, Tools: allTools, Policy: noPolicy, Script: []profile.Turn{
			{ToolCalls: call1("write_file", `{"path":"marker.txt","content":"x"}`)},
			{ToolCalls: call1("shell", `{"command":"pwd; ls"}`)}, {Text: "done"}}},
	)
	c := apiOf(t, st)

	t.Run("read-only cannot write", func(t *testing.T) {
		ro := optionRun(t, c, "writer", "opt-ro", "completed", &events.RunOptions{SafetyMode: events.SafetyReadOnly})
		if out := commandOutputs(t, st, ro); len(out) != 1 || out[0] != "TOOL-REFUSED\nCOMMAND-REFUSED\n" {
			t.Errorf("read-only run: the workspace was written: %q", out)
		}
		want := events.RunOptions{SafetyMode: events.SafetyReadOnly, ApprovalMode: events.ApprovalAsk, NetworkAccess: boolp(false)}
		if got := frozenOptions(t, st, ro); fmt.Sprintf("%s %s %t", got.SafetyMode, got.ApprovalMode, *got.NetworkAccess) != "read-only ask false" {
			t.Errorf("snapshot options %+v, want %+v", got, want)
		}
		start := startChunk(t, c, ro)
		if o := start.MessageMetadata.Options; o == nil || o.SafetyMode != events.SafetyReadOnly || o.ApprovalMode != events.ApprovalAsk ||
			o.NetworkAccess == nil || *o.NetworkAccess {
			t.Errorf("the stream's start chunk does not show the options: %s", start.Raw)
		}
		rw := optionRun(t, c, "writer", "opt-rw", "completed", nil)
		if out := commandOutputs(t, st, rw); len(out) != 1 || out[0] != "TOOL-WROTE\nCOMMAND-WROTE\n" {
			t.Errorf("workspace-write run could not write: %q", out)
		}
		if got := frozenOptions(t, st, rw); got.SafetyMode != events.SafetyWorkspaceWrite {
			t.Errorf("default safety mode %q, want workspace-write", got.SafetyMode)
		}
	})

	t.Run("network off cannot connect", func(t *testing.T) {
		off := optionRun(t, c, "netprober", "opt-net-off", "completed", &events.RunOptions{NetworkAccess: boolp(false)})
		if out := commandOutputs(t, st, off); len(out) != 1 || !strings.Contains(out[0], "BLOCKED:listener") {
			t.Errorf("network off: %q", out)
		}
		on := optionRun(t, c, "netprober", "opt-net-on", "completed", nil)
		if out := commandOutputs(t, st, on); len(out) != 1 || !strings.Contains(out[0], "REACHED:listener") {
			t.Errorf("network on (the profile's default): %q", out)
		}
		if got := frozenOptions(t, st, on); got.NetworkAccess == nil || !*got.NetworkAccess {
			t.Errorf("snapshot networkAccess %v, want true", got.NetworkAccess)
		}
	})

	t.Run("working directory is the cwd", func(t *testing.T) {
		wd := optionRun(t, c, "walker", "opt-wd", "completed", &events.RunOptions{WorkingDirectory: "sub/dir"})
		if out := commandOutputs(t, st, wd); len(out) != 1 || out[0] != "/workspace/sub/dir\nmarker.txt\n" {
			t.Errorf("working directory sub/dir: the command printed %q", out)
		}
		if got := frozenOptions(t, st, wd); got.WorkingDirectory != "sub/dir" {
			t.Errorf("snapshot workingDirectory %q", got.WorkingDirectory)
		}
	})
}

// TestOptionsBoundedByProfileAndScope: asking for more than the profile
// allows is 403 option_not_allowed, for more than the token's scopes 403
// forbidden_scope, a malformed option 422; within the bounds, approvalMode
// auto runs a workspace write the policy would ask about, and bypass (with
// scope unconfined) runs a command it would ask about, where ask pauses.
func TestOptionsBoundedByProfileAndScope(t *testing.T) {
	t.Parallel()
	asks := policy.Config{NoDefaults: true, Rules: []policy.Rule{
		{ID: "writes", Tool: "write_file", Action: policy.RequireApproval},
		{ID: "commands", Tool: "shell", Action: policy.RequireApproval}}}
	script := []profile.Turn{{ToolCalls: call1("write_file", `{"path":"a.txt","content":"x"}`)},
		{ToolCalls: call1("shell", `{"command":"cat a.txt"}`)}, {Text: "done"}}
	st := optionsEnv(t,
		profile.Profile{ID: "strict", Model: profile.ModelScripted, Tools: allTools, Policy: asks, Script: script,
			RunOptions: profile.RunOptions{ApprovalModes: []events.ApprovalMode{events.ApprovalAsk, events.ApprovalAuto}}},
		profile.Profile{ID: "open", Model: profile.ModelScripted, Tools: allTools, Policy: asks, Script: script,
			RunOptions: profile.RunOptions{ApprovalModes: []events.ApprovalMode{events.ApprovalAsk, events.ApprovalBypass}}},
	)
	c, unconfined := apiOf(t, st), apiClient(t, st, unconfinedToken, nil)
	refused := []struct {
		name   string
		c      *client.Client
		agent  string
		o      events.RunOptions
		status int
		code   string
	}{
		{"bypass forbidden by the profile", unconfined, "strict", events.RunOptions{ApprovalMode: events.ApprovalBypass},
			http.StatusForbidden, "option_not_allowed"},
		{"auto not listed", c, "open", events.RunOptions{ApprovalMode: events.ApprovalAuto}, http.StatusForbidden, "option_not_allowed"},
		{"network the profile forbids", c, "strict", events.RunOptions{NetworkAccess: boolp(true)}, http.StatusForbidden, "option_not_allowed"},
		{"bypass without scope", c, "open", events.RunOptions{ApprovalMode: events.ApprovalBypass}, http.StatusForbidden, "forbidden_scope"},
		{"outside the workspace", c, "strict", events.RunOptions{WorkingDirectory: "../../etc"}, http.StatusUnprocessableEntity, "validation_failed"},
	}
	for i, tc := range refused {
		req := client.CreateRunRequest{AgentID: tc.agent, Input: client.UserInput{Content: "x"}, Options: &tc.o}
		key := fmt.Sprintf("refused-%d", i)
		if _, err := tc.c.CreateRun(t.Context(), req, client.CommandOptions{IdempotencyKey: key}); !isProblem(err, tc.status, tc.code) {
			t.Errorf("%s: %v, want %d %s", tc.name, err, tc.status, tc.code)
		}
	}

	ask := optionRun(t, c, "strict", "opt-ask", "paused", nil)
	if n := countType(t, st, ask, events.ItemAwaitingApproval); n != 1 {
		t.Errorf("ask: %d calls await approval, want 1", n)
	}
	auto := optionRun(t, c, "strict", "opt-auto", "completed", &events.RunOptions{ApprovalMode: events.ApprovalAuto})
	if n := countType(t, st, auto, events.ItemAwaitingApproval); n != 0 {
		t.Errorf("auto: %d calls waited for approval, want none (a workspace write and a confined command)", n)
	}
	bypass := optionRun(t, unconfined, "open", "opt-bypass", "completed", &events.RunOptions{ApprovalMode: events.ApprovalBypass})
	if out := commandOutputs(t, st, bypass); len(out) != 1 || out[0] != "x" {
		t.Errorf("bypass: the command printed %q", out)
	}
	cancelRun(t, st, ask, "done", "opt-ask-cancel")
	waitStatus(t, st, ask, "cancelled", 30*time.Second)
}
