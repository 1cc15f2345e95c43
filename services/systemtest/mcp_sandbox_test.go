package systemtest_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/engine/compute"
	"github.com/xbot-runtime/xbot/services/engine/model"
	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/stack"
)

// identifiedCompute keeps the local provider's sandboxes under ids, as a
// provider that keeps them elsewhere does (compute.Identified).
type identifiedCompute struct{ compute.Provider }

type identifiedSandbox struct {
	compute.Sandbox
	id string
}

func (s identifiedSandbox) SandboxID() string { return s.id }

func (p identifiedCompute) Open(ctx context.Context, spec compute.Spec) (compute.Sandbox, error) {
	sb, err := p.Provider.Open(ctx, spec)
	if err != nil {
		return nil, err
	}
	return identifiedSandbox{Sandbox: sb, id: "id-" + spec.RunID}, nil
}

// TestMCPStdioServerInASandboxKeptUnderAnID: a stdio MCP server runs in the
// run's sandbox when the run starts (its tools are listed before
// runtime.run.started), and a sandbox its provider keeps under an id is
// recorded once the run has started — the log accepts nothing of the run
// before its start, so recording it earlier failed the start.
func TestMCPStdioServerInASandboxKeptUnderAnID(t *testing.T) {
	t.Parallel()
	agent := profile.Profile{ID: "idmcp", Model: profile.ModelScripted, MCPServers: []profile.MCPServer{stdioServer()},
		Script: []profile.Turn{{ToolCalls: call1("local__echo", `{"text":"from a kept sandbox"}`)}, {Text: "done"}}}
	e := newEnv(t).withAgents(agent)
	st := e.startWith("all", func(o *stack.Options) {
		o.Compute = identifiedCompute{localCompute(t, t.TempDir())}
		o.Models = (&requests{got: map[string][]model.Request{}}).resolver
	})
	runID := runUntil(t, st, "idmcp", "go", "idmcp-1", "completed", 30*time.Second)
	e.invariants(st)
	var out []string
	for _, p := range payloads[events.ItemCompletedPayload](t, st, runID) {
		if p.ItemType == events.ItemMCPToolCall {
			out = append(out, p.Content)
		}
	}
	if len(out) != 1 || !strings.Contains(out[0], "from a kept sandbox") {
		t.Errorf("the MCP call's result: %q", out)
	}
	attached := payloads[events.SandboxAttachedPayload](t, st, runID)
	if len(attached) != 1 || attached[0].SandboxID != "id-"+runID {
		t.Errorf("runtime.sandbox.attached: %+v, want the run's sandbox once", attached)
	}
	seq := sequence(t, st, runID)
	if i, j := slices.Index(seq, string(events.RunStarted)), slices.Index(seq, string(events.SandboxAttached)); i < 0 || j < i {
		t.Errorf("the run's log %v: the sandbox is recorded after the start", seq)
	}
}
