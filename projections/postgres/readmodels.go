package postgres

import (
	"encoding/json"
	"time"
)

// Item is one row of the items read model: a RuntimeItem as its events
// leave it (deltas excluded).
type Item struct {
	RunID      string `json:"runId"`
	ItemID     string `json:"itemId"`
	TenantID   string `json:"tenantId"`
	Type       string `json:"type"`
	Status     string `json:"status"`     // started | awaiting_approval | completed | truncated | failed
	StartedSeq int64  `json:"startedSeq"` // seq of runtime.item.started
	UpdatedSeq int64  `json:"updatedSeq"` // seq of the latest event that changed the item
	ToolName   string `json:"toolName,omitempty"`
	ToolCallID string `json:"toolCallId,omitempty"`
	// Input is the tool call's arguments as the model wrote them, cut to
	// 32 KiB (InputTruncated); the event at StartedSeq has them whole.
	Input          string `json:"input,omitempty"`
	InputTruncated bool   `json:"inputTruncated,omitempty"`
	// Output is the content of the closing event (nil while open), cut to
	// 32 KiB (OutputTruncated); the event at UpdatedSeq has it whole.
	Output          *string    `json:"output,omitempty"`
	OutputTruncated bool       `json:"outputTruncated,omitempty"`
	ErrorCode       string     `json:"errorCode,omitempty"`
	ErrorMessage    string     `json:"errorMessage,omitempty"`
	ExitCode        *int       `json:"exitCode,omitempty"` // command_execution only
	StartedAt       time.Time  `json:"startedAt"`
	CompletedAt     *time.Time `json:"completedAt,omitempty"`
	DurationMs      *int64     `json:"durationMs,omitempty"` // CompletedAt - StartedAt
}

// ItemFilter selects the items of one run, in log order.
type ItemFilter struct {
	TenantID string // required
	RunID    string // required
	// After is an opaque cursor returned by the previous page ("" = first page).
	After string
	Limit int
}

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
}

// ApprovalFilter selects a tenant's approvals, newest request first. Empty
// fields do not filter.
type ApprovalFilter struct {
	TenantID string // required
	Status   string // ApprovalPending, ApprovalResolved, ApprovalExpired or ApprovalCancelled
	RunID    string
	// After is an opaque cursor returned by the previous page ("" = first page).
	After string
	Limit int
}

// Session is one row of the sessions read model: an aggregate of the runs
// of one platform session of a tenant.
type Session struct {
	TenantID          string    `json:"tenantId"`
	PlatformSessionID string    `json:"platformSessionId"`
	FirstRunID        string    `json:"firstRunId"`    // earliest created (run id breaks ties)
	LastRunID         string    `json:"lastRunId"`     // latest created
	LastRunStatus     string    `json:"lastRunStatus"` // status of LastRunID
	RunCount          int64     `json:"runCount"`
	FirstRunAt        time.Time `json:"firstRunAt"`     // created_at of FirstRunID
	LastActivityAt    time.Time `json:"lastActivityAt"` // latest occurredAt of any event of the runs
}

// PermissionGrant is one row of permission_grants: one
// runtime.permission_grant.applied event, in run RunID at Seq.
type PermissionGrant struct {
	RunID             string    `json:"runId"`
	Seq               int64     `json:"seq"`
	TenantID          string    `json:"tenantId"`
	PlatformSessionID string    `json:"platformSessionId,omitempty"`
	ItemID            string    `json:"itemId,omitempty"`
	CommandID         string    `json:"commandId,omitempty"`
	Scope             string    `json:"scope"`
	ToolName          string    `json:"toolName"`
	GrantedAt         time.Time `json:"grantedAt"`
	GrantID           string    `json:"grantId,omitempty"`
	RuleID            string    `json:"ruleId,omitempty"`
	ActorType         string    `json:"actorType,omitempty"`
	ActorID           string    `json:"actorId,omitempty"`
}
