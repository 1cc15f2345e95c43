package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
)

// Approval is one row of the approvals read model.
type Approval struct {
	RunID             string          `json:"runId"`
	ItemID            string          `json:"itemId"`
	TenantID          string          `json:"tenantId"`
	PlatformSessionID string          `json:"platformSessionId,omitempty"`
	ItemType          string          `json:"itemType,omitempty"`
	Status            string          `json:"status"` // ApprovalPending | ApprovalResolved | ApprovalExpired | ApprovalCancelled
	ToolName          string          `json:"toolName,omitempty"`
	Input             json.RawMessage `json:"input,omitempty"`
	// ApprovalID, RuleID and RequestReason are the request's
	// (runtime.item.awaiting_approval approvalId, ruleId and reason).
	ApprovalID    string `json:"approvalId,omitempty"`
	RuleID        string `json:"ruleId,omitempty"`
	RequestReason string `json:"requestReason,omitempty"`
	Decision      string `json:"decision,omitempty"` // allow | deny, once resolved
	Scope         string `json:"scope,omitempty"`    // item | run | platform_session, once resolved
	ActorType     string `json:"actorType,omitempty"`
	ActorID       string `json:"actorId,omitempty"`
	Reason        string `json:"reason,omitempty"`    // the decision's reason
	CommandID     string `json:"commandId,omitempty"` // the SubmitApprovalDecision command
	// GrantID is set when a grant given for another item resolved this one.
	GrantID      string `json:"grantId,omitempty"`
	RequestedSeq int64  `json:"requestedSeq"`
	// ResolvedSeq and ResolvedAt are those of the event that took the
	// approval out of pending: the decision, or the item's failure or run's
	// end that expired or cancelled it.
	ResolvedSeq *int64     `json:"resolvedSeq,omitempty"`
	RequestedAt time.Time  `json:"requestedAt"`
	ResolvedAt  *time.Time `json:"resolvedAt,omitempty"`
	// AskReason and LapsedGrantID say why a call a grant covered asks
	// again (runtime.item.awaiting_approval askReason and grantId).
	AskReason     string `json:"askReason,omitempty"`
	LapsedGrantID string `json:"lapsedGrantId,omitempty"`
}

// ApprovalFilter selects a tenant's approvals, newest request first. Empty
// fields do not filter.
type ApprovalFilter struct {
	TenantID string // required
	Status   string // ApprovalPending, ApprovalResolved, ApprovalExpired or ApprovalCancelled
	RunID    string
	// ApprovalID keeps the approval of this id (apr_…) only.
	ApprovalID string
	// After is an opaque cursor returned by the previous page ("" = first page).
	After string
	Limit int
}

const approvalColumnsSQL = `run_id, item_id, tenant_id, platform_session_id, item_type, status, tool_name, input,
	decision, scope, actor_type, actor_id, reason, command_id, requested_seq, resolved_seq, requested_at,
	resolved_at, approval_id, rule_id, request_reason, grant_id, ask_reason, lapsed_grant_id`

func scanApproval(row pgx.CollectableRow) (Approval, error) {
	var a Approval
	var input *string
	err := row.Scan(&a.RunID, &a.ItemID, &a.TenantID, &a.PlatformSessionID, &a.ItemType, &a.Status, &a.ToolName,
		&input, &a.Decision, &a.Scope, &a.ActorType, &a.ActorID, &a.Reason, &a.CommandID, &a.RequestedSeq,
		&a.ResolvedSeq, &a.RequestedAt, &a.ResolvedAt, &a.ApprovalID, &a.RuleID, &a.RequestReason, &a.GrantID,
		&a.AskReason, &a.LapsedGrantID)
	if input != nil {
		a.Input = []byte(*input)
	}
	a.RequestedAt = a.RequestedAt.UTC()
	if a.ResolvedAt != nil {
		a.ResolvedAt = ptr(a.ResolvedAt.UTC())
	}
	return a, err
}

// ListApprovals returns a page of the tenant's approvals matching f, newest
// request first (requested_at descending, then run id and item id), and the
// cursor of the next page ("" on the last page). f.Limit <= 0 means 50; at
// most 200. A cursor not issued by ListApprovals yields ErrInvalidCursor.
func (s *Queries) ListApprovals(ctx context.Context, f ApprovalFilter) ([]Approval, string, error) {
	if f.TenantID == "" {
		return nil, "", errors.New("list approvals: tenant id is required")
	}
	sql, args, err := listApprovalsQuery(f)
	if err != nil {
		return nil, "", fmt.Errorf("list approvals: %w", err)
	}
	limit := clampLimit(f.Limit, defaultItemLimit, maxItemLimit)
	rows, err := s.pool.Query(ctx, sql, append(args, limit+1)...)
	if err != nil {
		return nil, "", fmt.Errorf("list approvals: %w", err)
	}
	out, err := pgx.CollectRows(rows, scanApproval)
	if err != nil {
		return nil, "", fmt.Errorf("list approvals: %w", err)
	}
	if len(out) <= limit {
		return out, "", nil
	}
	out = out[:limit]
	last := out[limit-1]
	return out, keyCursor{Kind: approvalCursorKind, Micros: last.RequestedAt.UnixMicro(), RunID: last.RunID,
		ItemID: last.ItemID}.encode(), nil
}

// listApprovalsQuery builds the keyset query of f; its last placeholder,
// the limit, is left for the caller.
func listApprovalsQuery(f ApprovalFilter) (string, []any, error) {
	sql := "SELECT " + approvalColumnsSQL + " FROM approvals WHERE tenant_id = $1"
	args := []any{f.TenantID}
	next := func() string { return "$" + strconv.Itoa(len(args)+1) }
	if f.Status != "" {
		sql += " AND status = " + next()
		args = append(args, f.Status)
	}
	if f.RunID != "" {
		sql += " AND run_id = " + next()
		args = append(args, f.RunID)
	}
	if f.ApprovalID != "" {
		sql += " AND approval_id = " + next()
		args = append(args, f.ApprovalID)
	}
	if f.After != "" {
		c, err := decodeKeyCursor(f.After, approvalCursorKind)
		if err != nil {
			return "", nil, err
		}
		t := next()
		args = append(args, time.UnixMicro(c.Micros))
		k := next()
		args = append(args, c.RunID)
		i := next()
		args = append(args, c.ItemID)
		sql += " AND (requested_at < " + t + " OR (requested_at = " + t + " AND (run_id, item_id) > (" + k + ", " + i + ")))"
	}
	return sql + " ORDER BY requested_at DESC, run_id, item_id LIMIT " + next(), args, nil
}
