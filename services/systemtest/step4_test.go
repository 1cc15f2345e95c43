package systemtest_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/services/api/client/agentruntime"
	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/stack"
)

// workspaceOf is the host directory of agent's one sandbox workspace below
// the provider's base directory dir (base/tenant/workspace/agent/owner),
// once there is one.
func workspaceOf(t *testing.T, dir, agent string) string {
	t.Helper()
	var ws []string
	eventually.Holds(t, convWait, agent+"'s sandbox workspace", func() bool {
		ws, _ = filepath.Glob(filepath.Join(dir, "*", "*", agent, "*", "workspace"))
		return len(ws) == 1
	})
	return ws[0]
}

// TestStep4TwoInputsOneWhileWorkingInBwrap is step 4 of the runtime client
// contract's verification: a conversation in a real bwrap sandbox gets two
// inputs, the second while the agent is still working (its shell command
// has not finished): the same reply answers both — the second is admitted
// in it, and its text says so — and the conversation's next input is a
// reply of its own in the same sandbox, which kept the first reply's file.
func TestStep4TwoInputsOneWhileWorkingInBwrap(t *testing.T) {
	t.Parallel()
	// The command appends to a file in the workspace and waits for a gate
	// the test opens only after the second input was admitted, so the
	// second input arrives while the agent works, however slow the machine.
	cmd := `echo turn >> log.txt; pwd; until [ -e gate ]; do sleep 0.05; done; rm gate; cat log.txt`
	agent := profile.Profile{ID: "worker", Model: profile.ModelScripted, Tools: []string{"shell"}, Policy: noPolicy,
		Script: []profile.Turn{{Text: "Working on it.", ToolCalls: call1("shell", fmt.Sprintf(`{"command":%q}`, cmd))},
			{Text: "You said: {{input}}"}}}
	e := newEnv(t)
	st, dir := bwrapAgentEnv(t, e, func(*stack.Options) {}, agent)
	startStreams(t, e, st)
	c := newConv(t, runtimeClient(t, st, "sess-step4", "worker"), nil)
	c.submit("step4-first", "first")
	c.until("the command's start", func(ev agentruntime.Event) bool {
		ch, ok := frameOf(ev)
		return ok && ch.Type == "tool-input-available"
	})
	ws := workspaceOf(t, dir, "worker")
	c.submit("step4-second", "second") // while the command waits for the gate
	releaseCommand(t, ws)
	end := c.idle()
	reply := c.got
	c.submit("step4-third", "third")
	c.until("the third input's reply", startedFor("step4-third"))
	releaseCommand(t, ws)
	next := c.idle()
	if end.Outcome != agentruntime.OutcomeCompleted || next.Outcome != agentruntime.OutcomeCompleted {
		t.Fatalf("the replies ended %s and %s, want completed", end.Outcome, next.Outcome)
	}
	wantOneReplyForBoth(t, reply, "step4-first", "step4-second", "second")
	outputs := toolOutputs(c.got)
	if len(outputs) != 2 || !strings.Contains(outputs[0], "/workspace") || !strings.Contains(outputs[1], "turn\nturn") {
		t.Errorf("the commands printed %q; want the workspace, and the second reply to find the first one's line", outputs)
	}
	e.invariants(st)
}

// releaseCommand lets the command waiting at the gate go on.
func releaseCommand(t *testing.T, ws string) {
	t.Helper()
	eventually.Holds(t, convWait, "the command to wait at the gate", func() bool {
		_, err := os.Stat(filepath.Join(ws, "log.txt"))
		return err == nil
	})
	if err := os.WriteFile(filepath.Join(ws, "gate"), nil, 0o644); err != nil { //nolint:gosec // read by the sandbox user
		t.Fatal(err)
	}
}

// wantOneReplyForBoth: one reply answered both inputs: the first started
// it, the second (saying said) was admitted in it, and its text answers
// the second.
func wantOneReplyForBoth(t *testing.T, evs []agentruntime.Event, first, second, said string) {
	t.Helper()
	var started []agentruntime.ResponseStarted
	var admitted []string
	var text strings.Builder
	for _, ev := range evs {
		switch e := ev.(type) {
		case agentruntime.ResponseStarted:
			started = append(started, e)
		case agentruntime.InputAdmitted:
			admitted = append(admitted, e.InputID)
		}
		if ch, ok := frameOf(ev); ok && ch.Type == "text-delta" {
			text.WriteString(ch.Delta)
		}
	}
	if len(started) != 1 || fmt.Sprint(started[0].InputIDs) != "["+first+"]" || fmt.Sprint(admitted) != "["+first+" "+second+"]" {
		t.Errorf("replies %+v, inputs admitted %v: want one reply of %s that admitted %s", started, admitted, first, second)
	}
	if !strings.Contains(text.String(), "You said: "+said) {
		t.Errorf("the reply said %q, want it to answer the second input", text.String())
	}
}

// toolOutputs are the outputs of the tool calls in evs, in order.
func toolOutputs(evs []agentruntime.Event) []string {
	var out []string
	for _, ev := range evs {
		ch, ok := frameOf(ev)
		if !ok || ch.Type != "tool-output-available" {
			continue
		}
		var o struct {
			Output string `json:"output"`
		}
		_ = json.Unmarshal(ch.Output, &o)
		out = append(out, o.Output)
	}
	return out
}
