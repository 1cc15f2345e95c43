package systemtest_test

import (
	"strings"
	"testing"

	"github.com/xbot-runtime/xbot/services/api/client"
	"github.com/xbot-runtime/xbot/services/api/client/agentruntime"
	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/stack"
)

// capabilityCase drives one capability an agent declares through the
// runtime client, in a conversation of its own, on st (whose bwrap
// sandboxes are below dir).
type capabilityCase func(t *testing.T, st *stack.Stack, dir string)

// gated is an agent whose shell command waits for a gate file in its
// workspace, which the test creates (releaseCommand): it works until the
// test lets it go on, then says what it was told last.
var gated = profile.Profile{ID: "gated", Model: profile.ModelScripted, Tools: []string{"shell"}, Policy: noPolicy,
	Script: []profile.Turn{{Text: "Working on it.", ToolCalls: call1("shell",
		`{"command":"echo turn >> log.txt; until [ -e gate ]; do sleep 0.05; done; rm gate"}`)}, {Text: "You said: {{input}}"}}}

// TestStep5InterruptAndEveryDeclaredCapability is step 5 of the runtime
// client contract's verification: an interrupt, and every optional
// capability the agents declare (GET /v1/agents/{agentId}: each control
// operation, each permission mode), through the whole user-visible path —
// the live events and, read again from the start, the recorded ones —
// including an approval answered only after the reader reconnected. A
// declared capability without a case here fails the test.
func TestStep5InterruptAndEveryDeclaredCapability(t *testing.T) {
	t.Parallel()
	_, st, dir := conformanceSystemIn(t, gated)
	cases := map[string]capabilityCase{
		"session_message": capSessionMessage, "steer": capSteer, "follow_up": capFollowUp,
		"clarification": capClarification, "approve": capApproveAfterReconnect, "deny": capDeny,
		"cancel": capCancel, "interrupt": capInterrupt, "compact": capCompact,
		"permission mode ask": capApproveAfterReconnect, "permission mode auto": capAutoApproval,
	}
	declared := map[string]bool{}
	for _, agent := range []string{"conformance-approval", "conformance-question", "conformance-slow", "gated"} {
		m, err := runtimeClient(t, st, "sess-caps-"+agent, agent).Capabilities(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for _, op := range m.ControlOperations {
			declared[op] = true
		}
		for _, mode := range m.PermissionModes {
			declared["permission mode "+mode] = true
		}
	}
	for cap := range declared {
		if cases[cap] == nil {
			t.Errorf("capability %q is declared and has no case here", cap)
		}
	}
	for name, run := range cases {
		if !declared[name] {
			t.Errorf("case %q is of a capability no agent declares", name)
			continue
		}
		t.Run(strings.ReplaceAll(name, " ", "_"), func(t *testing.T) { run(t, st, dir) })
	}
}

// replayed reads the conversation again from its start with a new reader
// and compares it with what the live reader saw: the recorded history is
// what was streamed.
func replayed(t *testing.T, st *stack.Stack, c *conv, agent string) {
	t.Helper()
	again := newConv(t, runtimeClient(t, st, c.rc.SessionKey(), agent), nil)
	for range c.got {
		again.until("the recorded events", func(agentruntime.Event) bool { return true })
	}
	for i := range c.got {
		got, _ := agentruntime.Encode(again.got[i])
		want, _ := agentruntime.Encode(c.got[i])
		if string(got) != string(want) {
			t.Fatalf("event %d read again: %s\nlive: %s", i, got, want)
		}
	}
}

func capSessionMessage(t *testing.T, st *stack.Stack, _ string) {
	c := newConv(t, runtimeClient(t, st, "sess-cap-msg", "demo"), nil)
	c.submit("cap-msg-1", "hello")
	if end := c.idle(); end.Outcome != agentruntime.OutcomeCompleted {
		t.Fatalf("the reply ended %s", end.Outcome)
	}
	replayed(t, st, c, "demo")
}

// capSteer sends a second input while the agent's command still runs: the
// reply admits it and answers it.
func capSteer(t *testing.T, st *stack.Stack, dir string) {
	c := newConv(t, runtimeClient(t, st, "sess-cap-steer", "gated"), nil)
	c.submit("cap-steer-1", "start")
	c.until("the command's start", isFrame("tool-input-available"))
	c.submit("cap-steer-2", "and also this")
	releaseCommand(t, workspaceOf(t, dir, "gated"))
	c.idle()
	wantOneReplyForBoth(t, c.got, "cap-steer-1", "cap-steer-2", "and also this")
	replayed(t, st, c, "gated")
}

func capFollowUp(t *testing.T, st *stack.Stack, _ string) {
	c := newConv(t, runtimeClient(t, st, "sess-cap-follow", "demo"), nil)
	c.submit("cap-follow-1", "one")
	c.idle()
	c.submit("cap-follow-2", "two")
	c.until("the follow-up's reply", startedFor("cap-follow-2"))
	if end := c.idle(); end.Outcome != agentruntime.OutcomeCompleted {
		t.Fatalf("the follow-up ended %s", end.Outcome)
	}
	replayed(t, st, c, "demo")
}

func capClarification(t *testing.T, st *stack.Stack, _ string) {
	c := newConv(t, runtimeClient(t, st, "sess-cap-q", "conformance-question"), nil)
	c.submit("cap-q-1", "ask me")
	open := c.until("the question", isEvent[agentruntime.InteractionOpened]).(agentruntime.InteractionOpened)
	if open.Contract.Kind != client.KindQuestion || open.Contract.Question != "Which colour?" {
		t.Fatalf("the question's contract %+v", open.Contract)
	}
	if err := c.rc.Answer(t.Context(), open.InteractionID, agentruntime.Response{Text: "green"}); err != nil {
		t.Fatal(err)
	}
	c.idle()
	// The answer is the result of the agent's ask_user call.
	if outs := toolOutputs(c.got); len(outs) != 1 || !strings.Contains(outs[0], "green") || closedAs(c.got, open.InteractionID) != agentruntime.ClosedAnswered {
		t.Errorf("the question's result %q, closed %q: want the answer green", outs, closedAs(c.got, open.InteractionID))
	}
	replayed(t, st, c, "conformance-question")
}

func isFrame(typ string) func(agentruntime.Event) bool {
	return func(ev agentruntime.Event) bool {
		ch, ok := frameOf(ev)
		return ok && ch.Type == typ
	}
}

// replyText is the text the replies' parts streamed.
func replyText(evs []agentruntime.Event) string {
	var b strings.Builder
	for _, ev := range evs {
		if ch, ok := frameOf(ev); ok && ch.Type == "text-delta" {
			b.WriteString(ch.Delta)
		}
	}
	return b.String()
}

// closedAs is the reason interaction id closed with in evs ("" if it did not).
func closedAs(evs []agentruntime.Event, id string) string {
	for _, ev := range evs {
		if c, ok := ev.(agentruntime.InteractionClosed); ok && c.InteractionID == id {
			return c.Reason
		}
	}
	return ""
}

func endsOf(evs []agentruntime.Event) []string {
	var out []string
	for _, ev := range evs {
		if e, ok := ev.(agentruntime.ResponseEnded); ok {
			out = append(out, e.Outcome)
		}
	}
	return out
}
