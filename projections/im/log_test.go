package im_test

import (
	"testing"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/events/eventstest"
)

// logBuilder is a run's log as the executor writes it (eventstest), with
// the shapes the chat cases share.
type logBuilder struct{ *eventstest.Log }

// t0 is the time before the first event; event seq n happens n seconds later.
const t0 = 1782806400000

func newLog(t *testing.T, runID, session, input string) *logBuilder {
	t.Helper()
	b := &logBuilder{eventstest.New(t, events.Identity{RunID: runID, TenantID: "acme", PlatformSessionID: session},
		eventstest.Clock(t0+1000, 1000))}
	b.Accepted(events.DerivedID("cmd", "create", runID), events.RunAcceptedPayload{AgentID: "helper",
		Input: events.UserInput{Content: input}, IdempotencyKey: "k-" + runID, Actor: events.Actor{Type: "user", ID: "usr_1"}})
	b.Started("")
	return b
}

// response adds a model response: started, a delta when it has text, completed.
func (b *logBuilder) response(id, text string, calls ...events.ToolCallRef) *logBuilder {
	b.Response(id, events.AssistantData{ToolCalls: calls}, text)
	return b
}

// completeTool completes tool item id of call c with output out.
func (b *logBuilder) completeTool(id string, t events.ItemType, c events.ToolCallRef, out string) *logBuilder {
	b.ToolCompleted(id, t, c, events.ToolResultData{Output: out})
	return b
}

// command adds the accepted outcome of a command and returns its id.
func (b *logBuilder) command(typ, key string) string {
	id := events.DerivedID("cmd", b.RunID(), key)
	b.CommandAccepted(id, events.CommandAcceptedPayload{CommandType: typ, IdempotencyKey: key})
	return id
}

func (b *logBuilder) applied(cmdID, typ, key, createdRun string) *logBuilder {
	b.CommandApplied(cmdID, events.CommandAppliedPayload{CommandType: typ, IdempotencyKey: key, CreatedRunID: createdRun})
	return b
}

// awaitApproval runs a tool item up to its approval request by policy rule,
// showing input to whoever decides.
func (b *logBuilder) awaitApproval(id, resp string, c events.ToolCallRef, input any, rule, reason string) *logBuilder {
	b.ToolStarted(id, resp, events.ItemCommandExecution, c)
	b.Add(events.Draft{Type: events.ItemAwaitingApproval, ItemID: id, Payload: events.ItemAwaitingApprovalPayload{
		ItemType: events.ItemCommandExecution, ToolName: c.Name, Input: eventstest.Raw(input),
		ApprovalID: eventstest.ApprovalID(b.RunID(), id), RuleID: rule, Reason: reason}})
	return b
}

// decide applies usr_2's decision on item id at once, as the executor's
// admission does (eventstest.Log.Decide).
func (b *logBuilder) decide(id, decision, scope, reason string) *logBuilder {
	key := "decide-" + id
	b.Decide(eventstest.Decision{CommandID: events.DerivedID("cmd", b.RunID(), key), ItemID: id, Decision: decision,
		Scope: scope, Reason: reason, Actor: events.Actor{Type: "user", ID: "usr_2"},
		Applied: events.CommandAppliedPayload{IdempotencyKey: key}})
	return b
}
