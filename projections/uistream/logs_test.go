package uistream_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/xbot-runtime/xbot/events"
)

// logBuilder writes a run's log the way the executor does: every event is
// folded, so a case that breaks the state machine fails here.
type logBuilder struct {
	t   testing.TB
	id  events.Identity
	st  events.RunState
	evs []events.Envelope
}

const testSession = "sess_01J00000000000000000000001"

func newLog(t testing.TB, runID string) *logBuilder {
	return &logBuilder{t: t, id: events.Identity{RunID: runID, TenantID: "acme", PlatformSessionID: testSession}}
}

// started is a log through runtime.run.started of a run created by command
// cmd with input.
func started(t testing.TB, runID, cmd, input string) *logBuilder {
	b := newLog(t, runID)
	b.accept(cmd, "key-"+runID, "", input)
	return b.add(events.Draft{Type: events.RunStarted, Payload: events.RunStartedPayload{ExecutorID: "ex-1"}})
}

func (b *logBuilder) accept(cmd, key, parent, input string) *logBuilder {
	return b.add(events.Draft{Type: events.RunAccepted, CommandID: cmd, Payload: events.RunAcceptedPayload{
		AgentID: "a", Input: events.UserInput{Content: input}, ParentRunID: parent, IdempotencyKey: key,
		SandboxKey: events.SandboxKey{TenantID: "acme", WorkspaceID: "w", AgentID: "a", OwnerID: "u"},
		Actor:      events.Actor{Type: "user", ID: "u"}}})
}

func (b *logBuilder) add(ds ...events.Draft) *logBuilder {
	b.t.Helper()
	for _, d := range ds {
		seq := b.st.LastSeq + 1
		env, err := d.Seal(b.id, seq, events.DerivedID("evt", b.id.RunID, fmt.Sprint(seq)), 1_700_000_000_000+1000*seq)
		if err != nil {
			b.t.Fatal(err)
		}
		if b.st, err = events.Fold(b.st, env); err != nil {
			b.t.Fatalf("%s: %v", d.Type, err)
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

func (b *logBuilder) itemStart(id string, t events.ItemType, data any) *logBuilder {
	p := events.ItemStartedPayload{ItemType: t}
	if data != nil {
		p.Data = raw(data)
	}
	return b.add(events.Draft{Type: events.ItemStarted, ItemID: id, Payload: p})
}

func (b *logBuilder) delta(id string, parts ...string) *logBuilder {
	for _, p := range parts {
		b.add(events.Draft{Type: events.ItemDelta, ItemID: id, Payload: events.ItemDeltaPayload{Delta: p}})
	}
	return b
}

func (b *logBuilder) itemDone(id string, t events.ItemType, status, content string, data any) *logBuilder {
	p := events.ItemCompletedPayload{ItemType: t, Status: status, Content: content}
	if data != nil {
		p.Data = raw(data)
	}
	return b.add(events.Draft{Type: events.ItemCompleted, ItemID: id, Payload: p})
}

func (b *logBuilder) itemFail(id string, t events.ItemType, code, msg string) *logBuilder {
	return b.add(events.Draft{Type: events.ItemFailed, ItemID: id, Payload: events.ItemFailedPayload{ItemType: t, ErrorCode: code, Message: msg}})
}

// response is a whole model response: its text in deltas and its calls.
func (b *logBuilder) response(id string, turn int, text []string, calls ...events.ToolCallRef) *logBuilder {
	b.itemStart(id, events.ItemAssistantMessage, nil).delta(id, text...)
	full := ""
	for _, p := range text {
		full += p
	}
	return b.itemDone(id, events.ItemAssistantMessage, events.ItemStatusCompleted, full, events.AssistantData{
		Turn: turn, ToolCalls: calls, FinishReason: finishOf(calls), Model: "m",
		Usage: &events.Usage{PromptTokens: 10 * (turn + 1), CompletionTokens: 5, TotalTokens: 10*(turn+1) + 5}})
}

func finishOf(calls []events.ToolCallRef) string {
	if len(calls) > 0 {
		return "tool_calls"
	}
	return "stop"
}

// toolStart opens the tool item id for call c of response resp.
func (b *logBuilder) toolStart(id, resp string, c events.ToolCallRef, t events.ItemType) *logBuilder {
	data := events.ToolCallData{ToolCallID: c.ID, ToolName: c.Name, Arguments: c.Arguments, ResponseItemID: resp}
	if t == events.ItemClarificationRequest {
		var q struct{ Question string }
		_ = json.Unmarshal([]byte(c.Arguments), &q)
		data.Question = q.Question
	}
	return b.itemStart(id, t, data)
}

func (b *logBuilder) toolDone(id string, c events.ToolCallRef, t events.ItemType, res events.ToolResultData) *logBuilder {
	res.ToolCallID, res.ToolName = c.ID, c.Name
	return b.itemDone(id, t, events.ItemStatusCompleted, res.Output, res)
}

func (b *logBuilder) command(t events.Type, cmd string, payload any) *logBuilder {
	return b.add(events.Draft{Type: t, CommandID: cmd, Payload: payload})
}

func (b *logBuilder) lifecycle(t events.Type, payload any) *logBuilder {
	return b.add(events.Draft{Type: t, Payload: payload})
}

// ask records that policy rule asks for approval of item id's call c.
func (b *logBuilder) ask(id string, c events.ToolCallRef, rule, reason string) *logBuilder {
	return b.add(events.Draft{Type: events.ItemAwaitingApproval, ItemID: id, Payload: events.ItemAwaitingApprovalPayload{
		ItemType: events.ItemCommandExecution, ToolName: c.Name, Input: []byte(c.Arguments),
		ApprovalID: events.DerivedID("apr", b.id.RunID, id), RuleID: rule, Reason: reason}})
}

// decide applies SubmitApprovalDecision cmd on item id as the executor's
// admission does: the decision; a deny fails the item; an allow for the run
// or session applies a grant that resolves the other items awaiting for the
// same tool and rule; applied; resumed once no item awaits.
func (b *logBuilder) decide(cmd, id, d, scope, reason string) *logBuilder {
	it, _ := b.st.Item(id)
	p := decision(d, scope)
	p.Reason, p.ApprovalID = reason, events.DerivedID("apr", b.id.RunID, id)
	b.add(events.Draft{Type: events.ApprovalDecisionSubmitted, ItemID: id, CommandID: cmd, Payload: p})
	switch {
	case d == events.DecisionDeny:
		msg := "denied by user"
		if reason != "" {
			msg += ": " + reason
		}
		b.add(events.Draft{Type: events.ItemFailed, ItemID: id, CommandID: cmd, Payload: events.ItemFailedPayload{
			ItemType: it.Type, ErrorCode: events.ToolErrDeniedByUser, Message: msg}})
	case scope != events.ScopeItem:
		g := events.PermissionGrant{GrantID: events.DerivedID("grt", cmd), Scope: scope, ToolName: it.ToolName,
			RuleID: it.RuleID, RunID: b.id.RunID, ItemID: id, Actor: p.Actor}
		b.add(events.Draft{Type: events.PermissionGrantApplied, CommandID: cmd, Payload: g})
		for _, o := range b.st.AwaitingApproval() {
			if g.Covers(o.ToolName, o.RuleID) {
				s := decision(events.DecisionAllow, scope)
				s.ApprovalID, s.GrantID, s.Reason = events.DerivedID("apr", b.id.RunID, o.ID), g.GrantID, "covered by the grant given for item "+id
				b.add(events.Draft{Type: events.ApprovalDecisionSubmitted, ItemID: o.ID, CommandID: cmd, Payload: s})
			}
		}
	}
	b.command(events.CommandApplied, cmd, applied("SubmitApprovalDecision"))
	if len(b.st.AwaitingApproval()) == 0 {
		b.command(events.RunResumed, cmd, events.RunResumedPayload{})
	}
	return b
}
