package postgres

import (
	"github.com/xbot-runtime/xbot/events"
)

// Approval statuses of the approvals read model.
const (
	ApprovalPending  = "pending"
	ApprovalResolved = "resolved"
)

// approvalChange is what one batch does to one approvals row. When
// inserted, the item started awaiting approval in this batch and the row
// is written whole (pending, or resolved by a later decision of the same
// batch); otherwise the decision resolves the stored row if it is pending.
type approvalChange struct {
	key      itemKey
	inserted bool

	tenantID, sessionID, itemType, toolName string
	input                                   []byte // nil = SQL NULL
	requestedSeq, requestedAt               int64

	resolved                                               bool
	decision, scope, actorType, actorID, reason, commandID string
	resolvedSeq, resolvedAt                                int64
}

// grantRow is a permission_grants row.
type grantRow struct {
	runID, tenantID, sessionID, itemID, commandID, scope, toolName string
	seq, grantedAt                                                 int64
}

// applyApproval plans the effect of e on the approvals and
// permission_grants read models.
func (p *batchPlan) applyApproval(e events.Envelope) error {
	switch e.Type {
	case events.ItemAwaitingApproval:
		return p.requestApproval(e)
	case events.ApprovalDecisionSubmitted:
		return p.decideApproval(e)
	case events.PermissionGrantApplied:
		var v events.PermissionGrantPayload
		if err := decodePayload(e, &v); err != nil {
			return err
		}
		p.grants = append(p.grants, grantRow{runID: e.RunID, tenantID: e.TenantID, sessionID: e.PlatformSessionID,
			itemID: e.ItemID, commandID: e.CommandID, scope: clean(v.Scope), toolName: clean(v.ToolName),
			seq: e.Seq, grantedAt: e.OccurredAt})
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
		requestedSeq: e.Seq, requestedAt: e.OccurredAt}
	if len(v.Input) > 0 {
		c.input = v.Input
	}
	if _, ok := p.approvals[c.key]; !ok {
		p.approvalOrder = append(p.approvalOrder, c.key)
	}
	p.approvals[c.key] = c
	return nil
}

func (p *batchPlan) decideApproval(e events.Envelope) error {
	var v events.ApprovalDecisionPayload
	if err := decodePayload(e, &v); err != nil {
		return err
	}
	if e.ItemID == "" {
		return nil
	}
	k := itemKey{e.RunID, e.ItemID}
	c, ok := p.approvals[k]
	switch {
	case ok && c.resolved:
		return nil // decided before in this batch: the item no longer awaits approval
	case !ok:
		c = &approvalChange{key: k}
		p.approvals[k] = c
		p.approvalOrder = append(p.approvalOrder, k)
	}
	c.resolved = true
	c.decision, c.scope, c.reason = clean(v.Decision), clean(v.Scope), clean(v.Reason)
	c.actorType, c.actorID, c.commandID = clean(v.Actor.Type), clean(v.Actor.ID), e.CommandID
	c.resolvedSeq, c.resolvedAt = e.Seq, e.OccurredAt
	return nil
}
