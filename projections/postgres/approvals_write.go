package postgres

import (
	"time"

	"github.com/jackc/pgx/v5"
)

// insertApprovalsSQL writes approvals requested in the batch whole; a new
// request for an item makes its row pending again.
const insertApprovalsSQL = `INSERT INTO approvals (run_id, item_id, tenant_id, platform_session_id, item_type,
	status, tool_name, input, decision, scope, actor_type, actor_id, reason, command_id, requested_seq,
	resolved_seq, requested_at, resolved_at, approval_id, rule_id, request_reason, grant_id)
SELECT r, it, te, ps, ty, st, tn, i::json, de, sc, at, ai, re, cm, rq, rs, ra, rsa, ap, ru, rr, gr
FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
	$9::text[], $10::text[], $11::text[], $12::text[], $13::text[], $14::text[], $15::bigint[], $16::bigint[],
	$17::timestamptz[], $18::timestamptz[], $19::text[], $20::text[], $21::text[], $22::text[])
	AS u(r, it, te, ps, ty, st, tn, i, de, sc, at, ai, re, cm, rq, rs, ra, rsa, ap, ru, rr, gr)
ON CONFLICT (run_id, item_id) DO UPDATE SET
	tenant_id = EXCLUDED.tenant_id, platform_session_id = EXCLUDED.platform_session_id,
	item_type = EXCLUDED.item_type, status = EXCLUDED.status, tool_name = EXCLUDED.tool_name,
	input = EXCLUDED.input, decision = EXCLUDED.decision, scope = EXCLUDED.scope,
	actor_type = EXCLUDED.actor_type, actor_id = EXCLUDED.actor_id, reason = EXCLUDED.reason,
	command_id = EXCLUDED.command_id, requested_seq = EXCLUDED.requested_seq,
	resolved_seq = EXCLUDED.resolved_seq, requested_at = EXCLUDED.requested_at,
	resolved_at = EXCLUDED.resolved_at, approval_id = EXCLUDED.approval_id, rule_id = EXCLUDED.rule_id,
	request_reason = EXCLUDED.request_reason, grant_id = EXCLUDED.grant_id`

// leavePendingSQL moves approvals requested before the batch out of pending
// (a decision, an expiry, a cancellation). Only a pending row changes: an
// item that no longer awaits approval stays as it is, as in events.Fold.
const leavePendingSQL = `UPDATE approvals AS a SET
	status = u.st, decision = u.de, scope = u.sc, actor_type = u.at, actor_id = u.ai, reason = u.re,
	command_id = u.cm, grant_id = u.gr, resolved_seq = u.rs, resolved_at = u.rsa
FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
	$9::text[], $10::text[], $11::bigint[], $12::timestamptz[]) AS u(r, it, st, de, sc, at, ai, re, cm, gr, rs, rsa)
WHERE a.run_id = u.r AND a.item_id = u.it AND a.status = 'pending'`

// closeRunApprovalsSQL closes what is still pending of runs that ended; it
// runs after the statements above, so it sees the batch's requests too.
const closeRunApprovalsSQL = `UPDATE approvals AS a SET status = u.st, resolved_seq = u.rs, resolved_at = u.rsa
FROM unnest($1::text[], $2::text[], $3::bigint[], $4::timestamptz[]) AS u(r, st, rs, rsa)
WHERE a.run_id = u.r AND a.status = 'pending'`

// approvalColumns holds one array per column of the approvals statements.
type approvalColumns struct {
	runs, items, tenants, sessions, types, statuses, tools               []string
	decisions, scopes, actorTypes, actorIDs, reasons, commands, grantIDs []string
	approvalIDs, ruleIDs, requestReasons                                 []string
	inputs                                                               []*string
	requested                                                            []int64
	resolved                                                             []*int64
	requestedAt                                                          []time.Time
	resolvedAt                                                           []*time.Time
}

func queueApprovals(b *pgx.Batch, p *batchPlan) {
	var ins, upd approvalColumns
	for _, k := range p.approvalOrder {
		c := p.approvals[k]
		if c.inserted {
			ins.addInsert(c)
		} else {
			upd.addKey(c)
			upd.statuses = append(upd.statuses, c.status)
			upd.addDecision(c)
		}
	}
	if len(ins.runs) > 0 {
		b.Queue(insertApprovalsSQL, ins.runs, ins.items, ins.tenants, ins.sessions, ins.types, ins.statuses,
			ins.tools, ins.inputs, ins.decisions, ins.scopes, ins.actorTypes, ins.actorIDs, ins.reasons, ins.commands,
			ins.requested, ins.resolved, ins.requestedAt, ins.resolvedAt, ins.approvalIDs, ins.ruleIDs,
			ins.requestReasons, ins.grantIDs)
	}
	if len(upd.runs) > 0 {
		b.Queue(leavePendingSQL, upd.runs, upd.items, upd.statuses, upd.decisions, upd.scopes, upd.actorTypes,
			upd.actorIDs, upd.reasons, upd.commands, upd.grantIDs, upd.resolved, upd.resolvedAt)
	}
	queueRunClosures(b, p)
}

func queueRunClosures(b *pgx.Batch, p *batchPlan) {
	n := len(p.closures)
	if n == 0 {
		return
	}
	runs, statuses, seqs, at := make([]string, n), make([]string, n), make([]int64, n), make([]time.Time, n)
	for i, c := range p.closures {
		runs[i], statuses[i], seqs[i], at[i] = c.runID, c.status, c.seq, ms(c.at)
	}
	b.Queue(closeRunApprovalsSQL, runs, statuses, seqs, at)
}

func (c *approvalColumns) addKey(x *approvalChange) {
	c.runs, c.items = append(c.runs, x.key.runID), append(c.items, x.key.itemID)
}

func (c *approvalColumns) addInsert(x *approvalChange) {
	c.addKey(x)
	c.tenants, c.sessions = append(c.tenants, x.tenantID), append(c.sessions, x.sessionID)
	c.types, c.tools = append(c.types, x.itemType), append(c.tools, x.toolName)
	c.inputs = append(c.inputs, bytesOrNil(x.input))
	c.requested, c.requestedAt = append(c.requested, x.requestedSeq), append(c.requestedAt, ms(x.requestedAt))
	c.approvalIDs, c.ruleIDs = append(c.approvalIDs, x.approvalID), append(c.ruleIDs, x.ruleID)
	c.requestReasons = append(c.requestReasons, x.requestReason)
	status := x.status
	if status == "" {
		status = ApprovalPending
	}
	c.statuses = append(c.statuses, status)
	c.addDecision(x)
}

// addDecision adds the columns set when the approval leaves pending (empty
// and NULL while pending).
func (c *approvalColumns) addDecision(x *approvalChange) {
	c.decisions, c.scopes = append(c.decisions, x.decision), append(c.scopes, x.scope)
	c.actorTypes, c.actorIDs = append(c.actorTypes, x.actorType), append(c.actorIDs, x.actorID)
	c.reasons, c.commands = append(c.reasons, x.reason), append(c.commands, x.commandID)
	c.grantIDs = append(c.grantIDs, x.grantID)
	var seq *int64
	var at *time.Time
	if x.status != "" {
		seq, at = ptr(x.resolvedSeq), msOrNil(&x.resolvedAt)
	}
	c.resolved, c.resolvedAt = append(c.resolved, seq), append(c.resolvedAt, at)
}
