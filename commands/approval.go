package commands

import "github.com/xbot-runtime/xbot/events"

// ApprovalID is the id of the approval request for item itemID of run
// runID: derived, so the engine that asks and the admission that answers
// name it alike.
func ApprovalID(runID, itemID string) string { return events.DerivedID("apr", runID, itemID) }

// decide admits a SubmitApprovalDecision. A paused run is at rest, which is
// itself a safe point, so a valid decision applies at once: it resolves that
// item only, and the run resumes when no item awaits any more. Deciding at
// admission also makes a second decision for the same item impossible: the
// item no longer awaits when the next command is admitted.
func (p *SubmitApprovalDecisionPayload) decide(st *events.RunState, c Envelope, opts AdmitOptions) Decision {
	if st.Status != events.StatusPaused || st.PauseReason != events.PauseAwaitingApproval {
		return reject(c, events.CodeInvalidState, "no approval is pending while the run is %s", describe(st))
	}
	it, ok := st.Item(p.ItemID)
	switch {
	case !ok:
		return reject(c, events.CodeApprovalNotPending, "run %s has no item %s", st.RunID, p.ItemID)
	case it.Status != events.ItemStatusAwaitingApproval:
		return reject(c, events.CodeApprovalNotPending, "item %s does not await approval (it is %s)", p.ItemID, it.Status)
	}
	if !implemented(string(SubmitApprovalDecision), opts) {
		return unsupported(c, string(SubmitApprovalDecision))
	}
	drafts, resumed := decisionEvents(*st, c, p, opts.Now)
	d := Decision{Outcome: events.OutcomeApplied, Events: drafts}
	if resumed {
		d.Then = EffectWake // the last decision resumed the run: the engine runs what was allowed
	}
	return d
}

// decisionEvents record decision p on a run paused awaiting approval (seed
// 004 §9.1-9.2). It resolves the named item only: a deny fails it as
// denied_by_user; an allow lets it run when the run resumes, and with scope
// run or platform_session also applies a grant, which resolves the other
// items awaiting for the same tool and rule. The run resumes (resumed is
// true) only when no item awaits any more.
func decisionEvents(st events.RunState, c Envelope, p *SubmitApprovalDecisionPayload, now int64) (drafts []events.Draft, resumed bool) {
	it, _ := st.Item(p.ItemID)
	drafts = []events.Draft{{Type: events.ApprovalDecisionSubmitted, ItemID: it.ID, CommandID: c.CommandID,
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
		drafts = append(drafts, grantEvents(st, c, p, it, resolved, now)...)
	}
	drafts = append(drafts, AppliedEvent(Pending(c), ""))
	for _, other := range st.AwaitingApproval() {
		if !resolved[other.ID] {
			return drafts, false // the run stays paused until every item is decided
		}
	}
	return append(drafts, events.Draft{Type: events.RunResumed, CommandID: c.CommandID}), true
}

// grantEvents apply the grant an allow of item it with scope run or
// platform_session gives, and allow the other awaiting items it covers,
// marking them resolved. A TTL counts from now, the time of the admission
// that records the grant.
func grantEvents(st events.RunState, c Envelope, p *SubmitApprovalDecisionPayload, it events.ItemRef, resolved map[string]bool, now int64) []events.Draft {
	g := events.PermissionGrant{GrantID: events.DerivedID("grt", c.CommandID), Scope: p.Scope, ToolName: it.ToolName,
		RuleID: it.RuleID, RunID: st.RunID, ItemID: it.ID, Actor: c.Actor, ExpiresAt: grantExpiry(p, now)}
	drafts := []events.Draft{{Type: events.PermissionGrantApplied, CommandID: c.CommandID, Payload: g}}
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
	return drafts
}
