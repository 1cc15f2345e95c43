package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"

	"github.com/xbot-runtime/xbot/events"
)

// Approval statuses, as Approval.Status and ApprovalQuery.Status name them.
const (
	ApprovalPending   = "pending"
	ApprovalResolved  = "resolved"
	ApprovalExpired   = "expired"
	ApprovalCancelled = "cancelled"
)

// Approval is a human decision on an item, requested by
// runtime.item.awaiting_approval: pending until decided, expired or
// cancelled.
type Approval struct {
	RunID             string `json:"runId"`
	ItemID            string `json:"itemId"`
	PlatformSessionID string `json:"platformSessionId,omitempty"`
	ItemType          string `json:"itemType,omitempty"`
	Status            string `json:"status"`
	ToolName          string `json:"toolName,omitempty"`
	// Input is the tool input the decision is about.
	Input         json.RawMessage `json:"input,omitempty"`
	ApprovalID    string          `json:"approvalId,omitempty"`
	RuleID        string          `json:"ruleId,omitempty"`
	RequestReason string          `json:"requestReason,omitempty"`
	// Decision, Scope and Actor are set once resolved.
	Decision  string        `json:"decision,omitempty"`
	Scope     string        `json:"scope,omitempty"`
	Actor     *events.Actor `json:"actor,omitempty"`
	Reason    string        `json:"reason,omitempty"`
	CommandID string        `json:"commandId,omitempty"`
	// GrantID is set when another item's grant resolved this one.
	GrantID      string `json:"grantId,omitempty"`
	RequestedSeq int64  `json:"requestedSeq"`
	ResolvedSeq  *int64 `json:"resolvedSeq,omitempty"`
	// RequestedAt and ResolvedAt are Unix milliseconds.
	RequestedAt int64  `json:"requestedAt"`
	ResolvedAt  *int64 `json:"resolvedAt,omitempty"`
	// AskReason (grant_revoked or grant_expired) and LapsedGrantID say why
	// a call a grant covered asks again.
	AskReason     string `json:"askReason,omitempty"`
	LapsedGrantID string `json:"lapsedGrantId,omitempty"`
}

// ApprovalQuery selects approvals of GET /v1/approvals.
type ApprovalQuery struct {
	// Status keeps only approvals in this state (ApprovalPending, …).
	Status string
	// RunID keeps only the approvals of this run.
	RunID string
	// ApprovalID keeps only the approval of this id.
	ApprovalID string
	Page
}

// ApprovalPage is the answer of GET /v1/approvals.
type ApprovalPage struct {
	Approvals []Approval `json:"approvals"`
	// NextCursor is the Page.Cursor of the next page; empty on the last.
	NextCursor string `json:"nextCursor,omitempty"`
}

// ListApprovals reads one page of the tenant's approvals, newest request
// first (GET /v1/approvals).
func (c *Client) ListApprovals(ctx context.Context, q ApprovalQuery) (ApprovalPage, error) {
	v := url.Values{}
	if q.Status != "" {
		v.Set("status", q.Status)
	}
	if q.RunID != "" {
		v.Set("runId", q.RunID)
	}
	if q.ApprovalID != "" {
		v.Set("approvalId", q.ApprovalID)
	}
	var out ApprovalPage
	err := c.call(ctx, http.MethodGet, withQuery("/v1/approvals", q.query(v)), nil, &out)
	return out, err
}

// AllApprovals reads every approval q selects, page after page (q.Page is
// where it starts).
func (c *Client) AllApprovals(ctx context.Context, q ApprovalQuery) ([]Approval, error) {
	return everyPage(ctx, q.Page, func(ctx context.Context, p Page) ([]Approval, string, error) {
		q.Cursor = p.Cursor
		page, err := c.ListApprovals(ctx, q)
		return page.Approvals, page.NextCursor, err
	})
}

// ApprovalDecisionRequest is the body of POST
// /v1/runs/{runId}/approval-decisions.
type ApprovalDecisionRequest struct {
	// ItemID is the item awaiting approval.
	ItemID string `json:"itemId"`
	// Decision is allow or deny.
	Decision string `json:"decision"`
	// Scope is item, run or platform_session: how far an allow reaches.
	Scope  string `json:"scope"`
	Reason string `json:"reason,omitempty"`
	// TTLSeconds bounds a platform_session grant's life; 0: until revoked.
	TTLSeconds int64 `json:"ttlSeconds,omitempty"`
}

// DecideApproval queues a SubmitApprovalDecision command (POST
// /v1/runs/{runId}/approval-decisions).
func (c *Client) DecideApproval(ctx context.Context, runID string, req ApprovalDecisionRequest, opts CommandOptions) (CommandResult, error) {
	return c.command(ctx, "/v1/runs/"+url.PathEscape(runID)+"/approval-decisions", req, opts)
}
