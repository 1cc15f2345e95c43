package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/danielgtaylor/huma/v2"
)

type approvalActor struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

// approval is a row of the approvals read model as the API shows it.
type approval struct {
	RunID             string          `json:"runId"`
	ItemID            string          `json:"itemId" doc:"The item awaiting (or having awaited) the decision."`
	PlatformSessionID string          `json:"platformSessionId,omitempty"`
	ItemType          string          `json:"itemType,omitempty"`
	Status            string          `json:"status" enum:"pending,resolved,expired,cancelled" doc:"pending: awaiting a decision; resolved: decided (allow or deny); expired: the run's pause outlived its pause TTL first; cancelled: the item or its run ended otherwise first."`
	ToolName          string          `json:"toolName,omitempty"`
	Input             json.RawMessage `json:"input,omitempty" doc:"The tool input the decision is about."`
	ApprovalID        string          `json:"approvalId,omitempty" doc:"Names the approval request (apr_…)."`
	RuleID            string          `json:"ruleId,omitempty" doc:"The policy rule that asked for approval; absent when the policy's default asked. Grants are per tool and rule."`
	RequestReason     string          `json:"requestReason,omitempty" doc:"Why the call needs approval (the reason of runtime.item.awaiting_approval)."`
	Decision          string          `json:"decision,omitempty" enum:"allow,deny" doc:"Set once resolved."`
	Scope             string          `json:"scope,omitempty" enum:"item,run,platform_session" doc:"How far the decision reaches; set once resolved."`
	Actor             *approvalActor  `json:"actor,omitempty" doc:"Who decided; set once resolved."`
	Reason            string          `json:"reason,omitempty" doc:"The decision's reason."`
	CommandID         string          `json:"commandId,omitempty" doc:"The SubmitApprovalDecision command that resolved it."`
	GrantID           string          `json:"grantId,omitempty" doc:"Set when a grant given by the decision on another item (scope run or platform_session, same tool and rule) resolved this one."`
	RequestedSeq      int64           `json:"requestedSeq" doc:"Seq of the runtime.item.awaiting_approval event."`
	ResolvedSeq       *int64          `json:"resolvedSeq,omitempty" doc:"Seq of the event that ended the wait: runtime.approval.decision_submitted, or the item's runtime.item.failed (or the run's end) that expired or cancelled it."`
	RequestedAt       int64           `json:"requestedAt" doc:"Unix milliseconds."`
	ResolvedAt        *int64          `json:"resolvedAt,omitempty" doc:"Unix milliseconds."`
	AskReason         string          `json:"askReason,omitempty" enum:"grant_revoked,grant_expired" doc:"Set when a grant covered such calls and no longer does (the askReason of runtime.item.awaiting_approval): it was revoked, or it expired."`
	LapsedGrantID     string          `json:"lapsedGrantId,omitempty" doc:"With askReason: the grant that no longer covers the call (the grantId of runtime.item.awaiting_approval)."`
}

func approvalView(r ApprovalRecord) approval {
	v := approval{RunID: r.RunID, ItemID: r.ItemID, PlatformSessionID: r.PlatformSessionID, ItemType: r.ItemType,
		Status: r.Status, ToolName: r.ToolName, Input: r.Input, ApprovalID: r.ApprovalID, RuleID: r.RuleID,
		RequestReason: r.RequestReason, Decision: r.Decision, Scope: r.Scope, Reason: r.Reason,
		CommandID: r.CommandID, GrantID: r.GrantID, RequestedSeq: r.RequestedSeq, ResolvedSeq: r.ResolvedSeq,
		RequestedAt: r.RequestedAt.UnixMilli(), AskReason: r.AskReason, LapsedGrantID: r.LapsedGrantID}
	if r.ActorType != "" || r.ActorID != "" {
		v.Actor = &approvalActor{Type: r.ActorType, ID: r.ActorID}
	}
	if r.ResolvedAt != nil {
		ms := r.ResolvedAt.UnixMilli()
		v.ResolvedAt = &ms
	}
	return v
}

type listApprovalsInput struct {
	Status     string `query:"status" enum:"pending,resolved,expired,cancelled" doc:"Only approvals in this state; pending lists exactly the items awaiting a decision."`
	RunID      string `query:"runId" maxLength:"160" pattern:"^[A-Za-z0-9._:-]{1,160}$" doc:"Only approvals of this run."`
	ApprovalID string `query:"approvalId" maxLength:"160" pattern:"^[A-Za-z0-9._:-]{1,160}$" doc:"Only the approval of this id (apr_…): how a chat button's short payload (apr:<approvalId>:<decision>:<scope>) finds its run and item."`
	Cursor     string `query:"cursor" doc:"nextCursor of the previous page."`
	Limit      int    `query:"limit" minimum:"1" maximum:"200" default:"50" doc:"Page size (the read model's bounds)."`
}

type approvalList struct {
	Approvals  []approval `json:"approvals" nullable:"false"`
	NextCursor string     `json:"nextCursor,omitempty" doc:"Pass as cursor to get the next page; absent on the last page."`
}

type listApprovalsOutput struct {
	Body approvalList
}

func (a *API) registerListApprovals() {
	const tag = "Approvals"
	doc := a.api.OpenAPI()
	doc.Tags = append(doc.Tags, &huma.Tag{Name: tag, Description: "Human decisions on items awaiting approval."})
	register(a, huma.Operation{
		OperationID: "listApprovals", Method: http.MethodGet, Path: "/v1/approvals",
		Summary: "List approvals",
		Description: "The tenant's approvals, newest request first, one page at a time; `?status=pending` is the " +
			"queue of decisions to make (submit them with POST /v1/runs/{runId}/approval-decisions). An approval " +
			"is requested by runtime.item.awaiting_approval and leaves pending once: resolved by a decision " +
			"(runtime.approval.decision_submitted), expired when the run's pause outlives its pause TTL, or " +
			"cancelled when the item or run ends otherwise. A runId of another tenant matches nothing.",
		Tags: []string{tag}, Errors: []int{http.StatusServiceUnavailable},
	}, a.listApprovals)
}

func (a *API) listApprovals(ctx context.Context, in *listApprovalsInput) (*listApprovalsOutput, error) {
	if in.RunID != "" {
		noteRun(ctx, in.RunID)
	}
	rows, next, err := a.store.ListApprovals(ctx, ApprovalFilter{TenantID: tenantOf(ctx),
		Status: in.Status, RunID: in.RunID, ApprovalID: in.ApprovalID, After: in.Cursor, Limit: in.Limit})
	if err != nil {
		return nil, fmt.Errorf("list approvals: %w", err)
	}
	out := &listApprovalsOutput{Body: approvalList{Approvals: make([]approval, 0, len(rows)), NextCursor: next}}
	for _, r := range rows {
		out.Body.Approvals = append(out.Body.Approvals, approvalView(r))
	}
	return out, nil
}
