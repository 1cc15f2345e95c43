package api

import (
	"context"
	"fmt"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/xbot-runtime/xbot/events"
)

// ReadModels reads the items, approvals, sessions and permission grants
// read models; the wiring adapts the Postgres ones to it.
//
// The list methods return ErrInvalidCursor for a cursor they did
// not issue (answered 422); GetSession returns an error for which
// errors.Is(err, ErrNotFound) holds when the tenant has no such
// session (answered 404).
type ReadModels interface {
	ListItems(ctx context.Context, f ItemFilter) ([]ItemRecord, string, error)
	ListApprovals(ctx context.Context, f ApprovalFilter) ([]ApprovalRecord, string, error)
	GetSession(ctx context.Context, tenantID, sessionID string) (SessionRecord, error)
	// HoldSession claims run runID for the tenant's platform session and
	// returns the platform_session grants in force that the run inherits
	// (none for an unknown session), under the session's lock taken shared:
	// a revoke of the session's grant waits for the hold's Release, which
	// comes once the run's CreateRun is sent.
	HoldSession(ctx context.Context, tenantID, sessionID, runID string) (SessionHold, []events.PermissionGrant, error)
	// RevokeSessionGrant marks the grant as asked to be revoked, under the
	// session's lock taken exclusively, and returns the runs claimed in the
	// session by then: from the mark on, no hold reads the grant.
	RevokeSessionGrant(ctx context.Context, tenantID, sessionID, grantID string) ([]string, error)
	// ClaimSession makes actorID the owner of the platform session unless
	// it has one, atomically, and returns the owner.
	ClaimSession(ctx context.Context, tenantID, sessionID, actorID string) (string, error)
	// ClaimIdempotencyKey makes (fingerprint, runID) what the tenant's
	// CreateRun key stands for unless it stands for a request already,
	// atomically, and returns the standing fingerprint and run id.
	ClaimIdempotencyKey(ctx context.Context, tenantID, key, fingerprint, runID string) (string, string, error)
}

// runItem is a row of the items read model as the API shows it.
type runItem struct {
	ItemID          string  `json:"itemId"`
	RunID           string  `json:"runId"`
	Type            string  `json:"type" doc:"The RuntimeItem type: user_message, assistant_message, reasoning, plan, command_execution, file_change, tool_call, mcp_tool_call, clarification_request or context_compaction."`
	Status          string  `json:"status" enum:"started,awaiting_approval,completed,truncated,failed"`
	StartedSeq      int64   `json:"startedSeq" doc:"Seq of the item's runtime.item.started event."`
	UpdatedSeq      int64   `json:"updatedSeq" doc:"Seq of the latest event that changed the item (deltas excluded); the closing event once the item is closed."`
	ToolName        string  `json:"toolName,omitempty"`
	ToolCallID      string  `json:"toolCallId,omitempty"`
	Input           string  `json:"input,omitempty" doc:"The tool call's arguments as the model wrote them (JSON text, possibly invalid), cut to 32 KiB."`
	InputTruncated  bool    `json:"inputTruncated,omitempty" doc:"input was cut; the event at startedSeq has it whole."`
	Output          *string `json:"output,omitempty" doc:"Content of the closing event: the message text, or the result the model received from the tool. Cut to 32 KiB; absent while the item is open or when it failed."`
	OutputTruncated bool    `json:"outputTruncated,omitempty" doc:"output was cut; the event at updatedSeq has it whole."`
	ErrorCode       string  `json:"errorCode,omitempty" doc:"Set when failed, e.g. unknown_tool, invalid_arguments, tool_error, cancelled, runtime_lost, blocked_by_policy (a policy rule forbids the call), denied_by_user (a person denied it), expired (the run's pause outlived its TTL before a decision)."`
	ErrorMessage    string  `json:"errorMessage,omitempty"`
	ExitCode        *int    `json:"exitCode,omitempty" doc:"Exit code of a completed command_execution."`
	StartedAt       int64   `json:"startedAt" doc:"Unix milliseconds."`
	CompletedAt     *int64  `json:"completedAt,omitempty" doc:"Unix milliseconds; set once the item is closed."`
	DurationMs      *int64  `json:"durationMs,omitempty" doc:"completedAt - startedAt."`
}

func itemView(it ItemRecord) runItem {
	v := runItem{ItemID: it.ItemID, RunID: it.RunID, Type: it.Type, Status: it.Status, StartedSeq: it.StartedSeq,
		UpdatedSeq: it.UpdatedSeq, ToolName: it.ToolName, ToolCallID: it.ToolCallID, Input: it.Input,
		InputTruncated: it.InputTruncated, Output: it.Output, OutputTruncated: it.OutputTruncated,
		ErrorCode: it.ErrorCode, ErrorMessage: it.ErrorMessage, ExitCode: it.ExitCode,
		StartedAt: it.StartedAt.UnixMilli(), DurationMs: it.DurationMs}
	if it.CompletedAt != nil {
		ms := it.CompletedAt.UnixMilli()
		v.CompletedAt = &ms
	}
	return v
}

type listRunItemsInput struct {
	RunID  string `path:"runId" maxLength:"160" pattern:"^[A-Za-z0-9._:-]{1,160}$" doc:"The run's id (run_…)."`
	Cursor string `query:"cursor" doc:"nextCursor of the previous page."`
	Limit  int    `query:"limit" minimum:"1" maximum:"200" default:"50" doc:"Page size (the read model's bounds)."`
}

type runItemList struct {
	Items      []runItem `json:"items" nullable:"false"`
	NextCursor string    `json:"nextCursor,omitempty" doc:"Pass as cursor to get the next page; absent on the last page."`
}

type listRunItemsOutput struct {
	Body runItemList
}

func (a *API) registerListRunItems() {
	register(a, huma.Operation{
		OperationID: "listRunItems", Method: http.MethodGet, Path: "/v1/runs/{runId}/items",
		Summary:     "List a run's items",
		Description: "The run's RuntimeItems (messages, reasoning, tool calls) in log order, from the items read model; follow nextCursor for the next page.",
		Tags:        []string{"Runs"},
		Errors:      []int{http.StatusNotFound, http.StatusServiceUnavailable},
	}, a.listRunItems)
}

func (a *API) listRunItems(ctx context.Context, in *listRunItemsInput) (*listRunItemsOutput, error) {
	noteRun(ctx, in.RunID)
	if _, err := a.findCreatedRun(ctx, in.RunID); err != nil {
		return nil, err
	}
	rows, next, err := a.store.ListItems(ctx, ItemFilter{TenantID: tenantOf(ctx), RunID: in.RunID,
		After: in.Cursor, Limit: in.Limit})
	if err != nil {
		return nil, fmt.Errorf("list items of run %s: %w", in.RunID, err)
	}
	out := &listRunItemsOutput{Body: runItemList{Items: make([]runItem, 0, len(rows)), NextCursor: next}}
	for _, r := range rows {
		out.Body.Items = append(out.Body.Items, itemView(r))
	}
	return out, nil
}
