package im_test

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/xbot-runtime/xbot/events"
)

// logBuilder writes a run's log the way the executor does: every event is
// sealed and folded, so a case that breaks the state machine fails here.
type logBuilder struct {
	t   *testing.T
	id  events.Identity
	st  events.RunState
	evs []events.Envelope
}

// t0 is the first event's time; every later event is one second later.
const t0 = 1782806400000

func newLog(t *testing.T, runID, session, input string) *logBuilder {
	t.Helper()
	b := &logBuilder{t: t, id: events.Identity{RunID: runID, TenantID: "acme", PlatformSessionID: session}}
	b.add(events.Draft{Type: events.RunAccepted, CommandID: events.DerivedID("cmd", "create", runID),
		Payload: events.RunAcceptedPayload{AgentID: "helper", Input: events.UserInput{Content: input},
			IdempotencyKey: "k-" + runID, Actor: events.Actor{Type: "user", ID: "usr_1"}}})
	return b.add(events.Draft{Type: events.RunStarted})
}

func (b *logBuilder) add(ds ...events.Draft) *logBuilder {
	b.t.Helper()
	for _, d := range ds {
		seq := b.st.LastSeq + 1
		env, err := d.Seal(b.id, seq, events.DerivedID("evt", b.id.RunID, strconv.FormatInt(seq, 10)), t0+1000*seq)
		if err != nil {
			b.t.Fatal(err)
		}
		if b.st, err = events.Fold(b.st, env); err != nil {
			b.t.Fatalf("seq %d %s: %v", seq, d.Type, err)
		}
		b.evs = append(b.evs, env)
	}
	return b
}

func raw(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// response adds a model response: started, a delta when it has text, completed.
func (b *logBuilder) response(id, text, status string, calls ...events.ToolCallRef) *logBuilder {
	b.add(events.Draft{Type: events.ItemStarted, ItemID: id, Payload: events.ItemStartedPayload{ItemType: events.ItemAssistantMessage}})
	if text != "" {
		b.add(events.Draft{Type: events.ItemDelta, ItemID: id, Payload: events.ItemDeltaPayload{Delta: text}})
	}
	return b.add(events.Draft{Type: events.ItemCompleted, ItemID: id, Payload: events.ItemCompletedPayload{
		ItemType: events.ItemAssistantMessage, Status: status, Content: text,
		Data: raw(events.AssistantData{ToolCalls: calls})}})
}

func (b *logBuilder) reply(id, text string) *logBuilder {
	return b.response(id, text, events.ItemStatusCompleted)
}

// startTool opens the item of a tool call.
func (b *logBuilder) startTool(id, resp string, t events.ItemType, c events.ToolCallRef, question string) *logBuilder {
	return b.add(events.Draft{Type: events.ItemStarted, ItemID: id, Payload: events.ItemStartedPayload{ItemType: t,
		Data: raw(events.ToolCallData{ToolCallID: c.ID, ToolName: c.Name, Arguments: c.Arguments, ResponseItemID: resp, Question: question})}})
}

func (b *logBuilder) completeTool(id string, t events.ItemType, c events.ToolCallRef, out string) *logBuilder {
	return b.add(events.Draft{Type: events.ItemCompleted, ItemID: id, Payload: events.ItemCompletedPayload{
		ItemType: t, Status: events.ItemStatusCompleted, Content: out,
		Data: raw(events.ToolResultData{ToolCallID: c.ID, ToolName: c.Name, Output: out})}})
}

// command adds the accepted outcome of a command and returns its id.
func (b *logBuilder) command(typ, key string) string {
	id := events.DerivedID("cmd", b.id.RunID, key)
	b.add(events.Draft{Type: events.CommandAccepted, CommandID: id, Payload: events.CommandAcceptedPayload{
		CommandType: typ, IdempotencyKey: key}})
	return id
}

func (b *logBuilder) applied(cmdID, typ, key, createdRun string) *logBuilder {
	return b.add(events.Draft{Type: events.CommandApplied, CommandID: cmdID, Payload: events.CommandAppliedPayload{
		CommandType: typ, IdempotencyKey: key, CreatedRunID: createdRun}})
}

// awaitApproval runs a tool item up to its approval request by policy rule.
func (b *logBuilder) awaitApproval(id, resp string, c events.ToolCallRef, input any, rule, reason string) *logBuilder {
	b.startTool(id, resp, events.ItemCommandExecution, c, "")
	return b.add(events.Draft{Type: events.ItemAwaitingApproval, ItemID: id, Payload: events.ItemAwaitingApprovalPayload{
		ItemType: events.ItemCommandExecution, ToolName: c.Name, Input: raw(input),
		ApprovalID: events.DerivedID("apr", b.id.RunID, id), RuleID: rule, Reason: reason}})
}

// decide applies an approval decision for item id at once, as the
// executor's admission does: the decision; a deny fails the item; an allow
// for the run or session applies a grant that resolves the other items
// awaiting for the same tool and rule; applied; resumed once none awaits.
func (b *logBuilder) decide(id, decision, scope, reason string) *logBuilder {
	key := "decide-" + id
	cmd := events.DerivedID("cmd", b.id.RunID, key)
	actor := events.Actor{Type: "user", ID: "usr_2"}
	it, _ := b.st.Item(id)
	b.add(events.Draft{Type: events.ApprovalDecisionSubmitted, ItemID: id, CommandID: cmd, Payload: events.ApprovalDecisionPayload{
		Decision: decision, Scope: scope, Reason: reason, Actor: actor, ApprovalID: events.DerivedID("apr", b.id.RunID, id)}})
	switch {
	case decision == events.DecisionDeny:
		b.add(events.Draft{Type: events.ItemFailed, ItemID: id, CommandID: cmd, Payload: events.ItemFailedPayload{
			ItemType: it.Type, ErrorCode: events.ToolErrDeniedByUser, Message: "denied by user: " + reason}})
	case scope != events.ScopeItem:
		g := events.PermissionGrant{GrantID: events.DerivedID("grt", cmd), Scope: scope, ToolName: it.ToolName,
			RuleID: it.RuleID, RunID: b.id.RunID, ItemID: id, Actor: actor}
		b.add(events.Draft{Type: events.PermissionGrantApplied, CommandID: cmd, Payload: g})
		for _, o := range b.st.AwaitingApproval() {
			if g.Covers(o.ToolName, o.RuleID) {
				b.add(events.Draft{Type: events.ApprovalDecisionSubmitted, ItemID: o.ID, CommandID: cmd, Payload: events.ApprovalDecisionPayload{
					Decision: events.DecisionAllow, Scope: scope, Actor: actor, ApprovalID: events.DerivedID("apr", b.id.RunID, o.ID),
					GrantID: g.GrantID, Reason: "covered by the grant given for item " + id}})
			}
		}
	}
	b.applied(cmd, "SubmitApprovalDecision", key, "")
	if len(b.st.AwaitingApproval()) == 0 {
		b.add(events.Draft{Type: events.RunResumed, CommandID: cmd})
	}
	return b
}
