package postgres

import "github.com/xbot-runtime/xbot/events"

// Approval statuses of the approvals read model. An approval leaves pending
// once, for one of the others; a new request for the item makes it pending
// again.
const (
	ApprovalPending  = "pending"
	ApprovalResolved = "resolved" // a decision was submitted (allow or deny)
	// ApprovalExpired: the run's pause outlived its TTL before a decision
	// (the item failed with errorCode expired, or the run expired).
	ApprovalExpired = "expired"
	// ApprovalCancelled: the item or its run ended otherwise before a
	// decision (a cancel, a failure).
	ApprovalCancelled = "cancelled"
)

// approvalChange is what one batch does to one approvals row. When
// inserted, the item started awaiting approval in this batch and the row
// is written whole (pending, or left by a later event of the same batch);
// otherwise the change moves the stored row out of pending, if it is pending.
type approvalChange struct {
	key      itemKey
	inserted bool

	tenantID, sessionID, itemType, toolName, approvalID, ruleID, requestReason string
	input                                                                      []byte // nil = SQL NULL
	requestedSeq, requestedAt                                                  int64

	// status is where the approval goes from pending ("" = it stays pending).
	status                                                          string
	decision, scope, actorType, actorID, reason, commandID, grantID string
	resolvedSeq, resolvedAt                                         int64
}

// runClosure closes the approvals of a run that ended while they were pending.
type runClosure struct {
	runID, status string
	seq, at       int64
}

// applyApproval plans the effect of e on the approvals and
// permission_grants read models.
func (p *batchPlan) applyApproval(e events.Envelope) error {
	switch e.Type {
	case events.ItemAwaitingApproval:
		return p.requestApproval(e)
	case events.ApprovalDecisionSubmitted:
		return p.decideApproval(e)
	case events.ItemFailed:
		return p.failApproval(e)
	case events.PermissionGrantApplied:
		return p.grant(e)
	case events.PermissionGrantRevoked:
		return p.revokeGrant(e)
	case events.RunExpired:
		p.closures = append(p.closures, runClosure{runID: e.RunID, status: ApprovalExpired, seq: e.Seq, at: e.OccurredAt})
	case events.RunCancelled, events.RunFailed, events.RunCompleted:
		p.closures = append(p.closures, runClosure{runID: e.RunID, status: ApprovalCancelled, seq: e.Seq, at: e.OccurredAt})
	default:
		// No other event type concerns approvals or grants.
	}
	return nil
}

func (p *batchPlan) requestApproval(e events.Envelope) error {
	var v events.ItemAwaitingApprovalPayload
	if err := decodePayload(e, &v); err != nil {
		return err
	}
	if e.ItemID == "" {
		return nil
	}
	c := &approvalChange{key: itemKey{e.RunID, e.ItemID}, inserted: true, tenantID: e.TenantID,
		sessionID: e.PlatformSessionID, itemType: clean(string(v.ItemType)), toolName: clean(v.ToolName),
		approvalID: clean(v.ApprovalID), ruleID: clean(v.RuleID), requestReason: clean(v.Reason),
		requestedSeq: e.Seq, requestedAt: e.OccurredAt}
	if len(v.Input) > 0 {
		c.input = v.Input
	}
	if _, ok := p.approvals[c.key]; !ok {
		p.approvalOrder = append(p.approvalOrder, c.key)
	}
	p.approvals[c.key] = c
	p.noteAsk(c.key, v)
	return nil
}

func (p *batchPlan) decideApproval(e events.Envelope) error {
	var v events.ApprovalDecisionPayload
	if err := decodePayload(e, &v); err != nil {
		return err
	}
	c := p.leavePending(e, ApprovalResolved)
	if c == nil {
		return nil
	}
	c.decision, c.scope, c.reason = clean(v.Decision), clean(v.Scope), clean(v.Reason)
	c.actorType, c.actorID, c.commandID, c.grantID = clean(v.Actor.Type), clean(v.Actor.ID), e.CommandID, clean(v.GrantID)
	return nil
}

// failApproval closes the approval of a tool item that failed before a
// decision: expired for errorCode expired, cancelled otherwise. A failure
// after a decision (denied_by_user) leaves the resolved approval alone.
func (p *batchPlan) failApproval(e events.Envelope) error {
	v, err := p.itemFailed(e)
	if err != nil || !v.ItemType.RunsTool() {
		return err // items that run no tool never await approval
	}
	status := ApprovalCancelled
	if v.ErrorCode == events.ToolErrExpired {
		status = ApprovalExpired
	}
	p.leavePending(e, status)
	return nil
}

// leavePending plans that e's item's approval leaves pending for status and
// returns the change to fill in, or nil when the batch already moved it out
// of pending (or e names no item).
func (p *batchPlan) leavePending(e events.Envelope, status string) *approvalChange {
	if e.ItemID == "" {
		return nil
	}
	k := itemKey{e.RunID, e.ItemID}
	c, ok := p.approvals[k]
	switch {
	case ok && c.status != "":
		return nil // left pending before in this batch
	case !ok:
		c = &approvalChange{key: k}
		p.approvals[k] = c
		p.approvalOrder = append(p.approvalOrder, k)
	}
	c.status, c.resolvedSeq, c.resolvedAt = status, e.Seq, e.OccurredAt
	return c
}
