package uistream_test

import (
	"testing"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/events/eventstest"
)

// logBuilder is a run's log as the executor writes it (eventstest), with
// the shapes the stream cases share.
type logBuilder struct{ *eventstest.Log }

const testSession = "sess_01J00000000000000000000001"

// newLog is an empty log of runID in testSession; event seq n happens at
// Epoch + n seconds.
func newLog(t testing.TB, runID string) *logBuilder {
	return &logBuilder{eventstest.New(t, events.Identity{RunID: runID, TenantID: "acme", PlatformSessionID: testSession},
		eventstest.Clock(eventstest.Epoch+1000, 1000))}
}

// started is a log through runtime.run.started of a run created by command
// cmd with input.
func started(t testing.TB, runID, cmd, input string) *logBuilder {
	b := newLog(t, runID).accept(cmd, "key-"+runID, "", input)
	b.Started("ex-1")
	return b
}

func (b *logBuilder) accept(cmd, key, parent, input string) *logBuilder {
	b.Accepted(cmd, events.RunAcceptedPayload{
		AgentID: "a", Input: events.UserInput{Content: input}, ParentRunID: parent, IdempotencyKey: key,
		SandboxKey: events.SandboxKey{TenantID: "acme", WorkspaceID: "w", AgentID: "a", OwnerID: "u"},
		Actor:      events.Actor{Type: "user", ID: "u"}})
	return b
}

// response is a whole model response: its text in deltas and its calls.
func (b *logBuilder) response(id string, turn int, text []string, calls ...events.ToolCallRef) *logBuilder {
	b.Response(id, events.AssistantData{Turn: turn, ToolCalls: calls, FinishReason: finishOf(calls), Model: "m",
		Usage: &events.Usage{PromptTokens: 10 * (turn + 1), CompletionTokens: 5, TotalTokens: 10*(turn+1) + 5}}, text...)
	return b
}

func finishOf(calls []events.ToolCallRef) string {
	if len(calls) > 0 {
		return "tool_calls"
	}
	return "stop"
}

// decide applies u's SubmitApprovalDecision cmd on item id at once, as the
// executor's admission does (eventstest.Log.Decide).
func (b *logBuilder) decide(cmd, id, d, scope, reason string) *logBuilder {
	b.Decide(eventstest.Decision{CommandID: cmd, ItemID: id, Decision: d, Scope: scope, Reason: reason,
		Actor: events.Actor{Type: "user", ID: "u"}, Applied: applied("SubmitApprovalDecision")})
	return b
}
