package eventstest

import "github.com/xbot-runtime/xbot/events"

// ApprovalID is the id of the approval request for item of run runID,
// derived as commands.ApprovalID derives it.
func ApprovalID(runID, item string) string { return events.DerivedID("apr", runID, item) }

// GrantID is the id of the grant an allow wider than the item by command
// cmd applies, derived as admission derives it.
func GrantID(cmd string) string { return events.DerivedID("grt", cmd) }

// Ask records that policy rule asks for approval of started tool item's
// call c, for reason: the item awaits approval with the call's arguments as
// input. It fails the test if item has not started.
func (l *Log) Ask(item string, c events.ToolCallRef, rule, reason string) *Log {
	l.tb.Helper()
	it, ok := l.state.Item(item)
	if !ok {
		l.tb.Fatalf("run %s has no item %s to ask about", l.id.RunID, item)
	}
	var input []byte
	if c.Arguments != "" {
		input = []byte(c.Arguments)
	}
	return l.Add(events.Draft{Type: events.ItemAwaitingApproval, ItemID: item, Payload: events.ItemAwaitingApprovalPayload{
		ItemType: it.Type, ToolName: c.Name, Input: input, ApprovalID: ApprovalID(l.id.RunID, item),
		RuleID: rule, Reason: reason}})
}

// Decision is a SubmitApprovalDecision for Decide.
type Decision struct {
	// CommandID is the command's id; every event of the decision names it.
	CommandID string
	// ItemID is the item awaiting approval.
	ItemID string
	// Decision is events.DecisionAllow or events.DecisionDeny.
	Decision string
	// Scope is events.ScopeItem, ScopeRun or ScopePlatformSession.
	Scope string
	// Reason is the decider's reason, may be empty.
	Reason string
	// Actor is who decided.
	Actor events.Actor
	// Applied is the command's runtime.command.applied; CommandType
	// defaults to SubmitApprovalDecision.
	Applied events.CommandAppliedPayload
	// QueuedAt, when not 0, is the run's place in its sandbox key's queue:
	// another run held the key, so the last decision queues the run there
	// instead of resuming it.
	QueuedAt int
}

// Decide applies decision d at once, as admission does on a run paused
// awaiting approval: the decision on d.ItemID; a deny fails the item as
// denied_by_user; an allow for the run or the platform session applies a
// grant, which also allows the other awaiting items of the same tool and
// rule; then the command's applied outcome; then the run resumes if no item
// awaits any more.
func (l *Log) Decide(d Decision) *Log {
	l.tb.Helper()
	it, _ := l.state.Item(d.ItemID)
	l.Add(events.Draft{Type: events.ApprovalDecisionSubmitted, ItemID: d.ItemID, CommandID: d.CommandID,
		Payload: events.ApprovalDecisionPayload{Decision: d.Decision, Scope: d.Scope, Reason: d.Reason, Actor: d.Actor,
			ApprovalID: ApprovalID(l.id.RunID, d.ItemID)}})
	switch {
	case d.Decision == events.DecisionDeny:
		msg := "denied by user"
		if d.Reason != "" {
			msg += ": " + d.Reason
		}
		l.Add(events.Draft{Type: events.ItemFailed, ItemID: d.ItemID, CommandID: d.CommandID, Payload: events.ItemFailedPayload{
			ItemType: it.Type, ErrorCode: events.ToolErrDeniedByUser, Message: msg}})
	case d.Scope == events.ScopeRun || d.Scope == events.ScopePlatformSession:
		l.grant(d, it)
	}
	if d.Applied.CommandType == "" {
		d.Applied.CommandType = "SubmitApprovalDecision"
	}
	l.CommandApplied(d.CommandID, d.Applied)
	switch {
	case len(l.state.AwaitingApproval()) > 0:
	case d.QueuedAt > 0:
		l.Queued(d.CommandID, d.QueuedAt)
	default:
		l.Resumed(d.CommandID)
	}
	return l
}

// grant applies the grant an allow of it with a scope wider than the item
// gives, and allows the other awaiting items it covers.
func (l *Log) grant(d Decision, it events.ItemRef) {
	l.tb.Helper()
	g := events.PermissionGrant{GrantID: GrantID(d.CommandID), Scope: d.Scope, ToolName: it.ToolName,
		RuleID: it.RuleID, RunID: l.id.RunID, ItemID: it.ID, Actor: d.Actor}
	l.Add(events.Draft{Type: events.PermissionGrantApplied, CommandID: d.CommandID, Payload: g})
	for _, o := range l.state.AwaitingApproval() {
		if g.Covers(o.ToolName, o.RuleID) {
			l.Add(events.Draft{Type: events.ApprovalDecisionSubmitted, ItemID: o.ID, CommandID: d.CommandID,
				Payload: events.ApprovalDecisionPayload{Decision: events.DecisionAllow, Scope: d.Scope, Actor: d.Actor,
					ApprovalID: ApprovalID(l.id.RunID, o.ID), GrantID: g.GrantID,
					Reason: "covered by the grant given for item " + it.ID}})
		}
	}
}
