package executor

import (
	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
)

// ApprovalID is the id of the approval request for item itemID of run
// runID: derived, so the engine that asks and the admission that answers
// name it alike.
func ApprovalID(runID, itemID string) string { return events.DerivedID("apr", runID, itemID) }

// decisionDrafts records SubmitApprovalDecision c on a run paused awaiting
// approval (seed 004 §9.1-9.2). It resolves the named item only: a deny
// fails it as denied_by_user; an allow lets it run when the run resumes, and
// with scope run or platform_session also applies a grant, which resolves the
// other items awaiting for the same tool and rule. The run resumes only when
// no item awaits any more.
func decisionDrafts(st events.RunState, c commands.Envelope, p *commands.SubmitApprovalDecisionPayload, pc events.PendingCommand) []events.Draft {
	it, _ := st.Item(p.ItemID)
	drafts := []events.Draft{{Type: events.ApprovalDecisionSubmitted, ItemID: it.ID, CommandID: c.CommandID,
		Payload: events.ApprovalDecisionPayload{Decision: p.Decision, Scope: p.Scope, Reason: p.Reason, Actor: c.Actor,
			ApprovalID: ApprovalID(st.RunID, it.ID)}}}
	resolved := map[string]bool{it.ID: true}
	switch {
	case p.Decision == events.DecisionDeny:
		msg := "denied by user"
		if p.Reason != "" {
			msg += ": " + p.Reason
		}
		drafts = append(drafts, events.Draft{Type: events.ItemFailed, ItemID: it.ID, CommandID: c.CommandID,
			Payload: events.ItemFailedPayload{ItemType: it.Type, ErrorCode: events.ToolErrDeniedByUser, Message: msg}})
	case p.Scope == events.ScopeRun || p.Scope == events.ScopePlatformSession:
		g := events.PermissionGrant{GrantID: events.DerivedID("grt", c.CommandID), Scope: p.Scope, ToolName: it.ToolName,
			RuleID: it.RuleID, RunID: st.RunID, ItemID: it.ID, Actor: c.Actor}
		drafts = append(drafts, events.Draft{Type: events.PermissionGrantApplied, CommandID: c.CommandID, Payload: g})
		for _, other := range st.AwaitingApproval() {
			if other.ID == it.ID || !g.Covers(other.ToolName, other.RuleID) {
				continue
			}
			resolved[other.ID] = true
			drafts = append(drafts, events.Draft{Type: events.ApprovalDecisionSubmitted, ItemID: other.ID, CommandID: c.CommandID,
				Payload: events.ApprovalDecisionPayload{Decision: events.DecisionAllow, Scope: p.Scope, Actor: c.Actor,
					ApprovalID: ApprovalID(st.RunID, other.ID), GrantID: g.GrantID,
					Reason: "covered by the grant given for item " + it.ID}})
		}
	}
	drafts = append(drafts, applied(pc, ""))
	for _, other := range st.AwaitingApproval() {
		if !resolved[other.ID] {
			return drafts // the run stays paused until every item is decided
		}
	}
	return append(drafts, events.Draft{Type: events.RunResumed, CommandID: c.CommandID})
}

// expireDrafts ends a paused run whose pause outlived its TTL: open items
// (approvals and questions nobody answered) fail as expired, the run
// expires, and pending commands are closed as no_effect.
func expireDrafts(st events.RunState) []events.Draft {
	drafts := closeOpenItems(st, events.ToolErrExpired, "nobody answered before the run's pause expired")
	drafts = append(drafts, events.Draft{Type: events.RunExpired, Payload: events.RunExpiredPayload{
		PauseReason: st.PauseReason, PausedAt: st.PausedAt, PauseTTLMs: st.PauseTTLMs}})
	for _, p := range st.Pending {
		drafts = append(drafts, noEffect(p, "the run expired before the command could apply"))
	}
	return drafts
}
