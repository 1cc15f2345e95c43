package api

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/xbot-runtime/xbot/events"
)

// The read types below are what the API reads from the read models: one
// record per row it serves, in the API's own terms, so that the API depends
// on no projection. The wiring adapts the Postgres read models to them.

// ErrNotFound is what a Store returns (errors.Is) when the tenant has no such
// run, command, session or stream run: the API answers 404.
var ErrNotFound = errors.New("not found")

// ErrInvalidCursor is what a Store's list methods return (errors.Is) for a
// cursor they did not issue: the API answers 422.
var ErrInvalidCursor = errors.New("invalid cursor")

// RunRecord is a run as the runs read model holds it.
type RunRecord struct {
	RunID             string
	TenantID          string
	PlatformSessionID string
	AgentID           string
	ParentRunID       string
	Status            string
	PauseReason       string
	ErrorCode         string
	CancelReason      string
	Input             json.RawMessage
	SandboxKey        json.RawMessage
	Metadata          json.RawMessage
	LastSeq           int64
	CreatedAt         time.Time
	UpdatedAt         time.Time
	// SnapshotHash is the hash of the run's capability snapshot, once frozen
	// (runtime.capability.snapshot_frozen).
	SnapshotHash string
	Usage        Usage
	// AcceptedPartition and AcceptedOffset are the position of the run's
	// runtime.run.accepted in the events topic (-1 when unknown).
	AcceptedPartition int32
	AcceptedOffset    int64
	// QueuePosition is set for a queued run only: its place in its sandbox
	// key's queue (1 = next to start), as the read model has it.
	QueuePosition *int64
}

// Usage is the token accounting of a run's model calls.
type Usage struct {
	// ModelCalls counts the agent loop's completed model calls.
	ModelCalls int64
	// PromptTokens, CompletionTokens and TotalTokens sum the usage of the
	// model calls and of the compactions' summarising calls.
	PromptTokens     int64
	CompletionTokens int64
	TotalTokens      int64
	// Compactions counts runtime.context.compacted events.
	Compactions int64
}

// RunFilter selects runs for a listing. Empty fields do not filter.
type RunFilter struct {
	TenantID          string // required
	PlatformSessionID string
	Status            string
	// After is an opaque cursor returned by the previous page ("" = first page).
	After string
	Limit int
}

// EventRecord is a committed event as the log holds it.
type EventRecord struct {
	RunID             string
	Seq               int64
	EventID           string
	Type              string
	TenantID          string
	PlatformSessionID string
	ItemID            string
	CommandID         string
	OccurredAt        int64
	EmittedAt         int64
	Envelope          json.RawMessage // the full event envelope, byte for byte
}

// CommandRecord is a command's latest outcome.
type CommandRecord struct {
	CommandID         string
	RunID             string
	TenantID          string
	Type              string
	IdempotencyKey    string
	Outcome           string // accepted | rejected | duplicate | no_effect | applied
	FirstOutcome      string
	Code              string
	Message           string
	OriginalCommandID string // set for duplicates
	OriginalOutcome   string // duplicates: the original command's outcome
	OriginalCode      string // duplicates: the original command's code, if any
	// CreatedRunID is the run the command created in its session (an
	// applied follow-up); for a duplicate of such a command, the original's.
	CreatedRunID string
	Seq          int64 // seq of the latest outcome event
	UpdatedAt    time.Time
}

// ItemRecord is a RuntimeItem as its events leave it (deltas excluded).
type ItemRecord struct {
	RunID      string
	ItemID     string
	TenantID   string
	Type       string
	Status     string // started | awaiting_approval | completed | truncated | failed
	StartedSeq int64  // seq of runtime.item.started
	UpdatedSeq int64  // seq of the latest event that changed the item
	ToolName   string
	ToolCallID string
	// Input is the tool call's arguments, cut to 32 KiB (InputTruncated).
	Input          string
	InputTruncated bool
	// Output is the content of the closing event (nil while open), cut to
	// 32 KiB (OutputTruncated).
	Output          *string
	OutputTruncated bool
	ErrorCode       string
	ErrorMessage    string
	ExitCode        *int // command_execution only
	StartedAt       time.Time
	CompletedAt     *time.Time
	DurationMs      *int64 // CompletedAt - StartedAt
}

// ItemFilter selects the items of one run, in log order.
type ItemFilter struct {
	TenantID string // required
	RunID    string // required
	// After is an opaque cursor returned by the previous page ("" = first page).
	After string
	Limit int
}

// ApprovalRecord is an approval request and, once resolved, its decision.
type ApprovalRecord struct {
	RunID             string
	ItemID            string
	TenantID          string
	PlatformSessionID string
	ItemType          string
	Status            string // pending | resolved | expired | cancelled
	ToolName          string
	Input             json.RawMessage
	// ApprovalID, RuleID and RequestReason are the request's.
	ApprovalID    string
	RuleID        string
	RequestReason string
	Decision      string // allow | deny, once resolved
	Scope         string // item | run | platform_session, once resolved
	ActorType     string
	ActorID       string
	Reason        string // the decision's reason
	CommandID     string // the SubmitApprovalDecision command
	// GrantID is set when a grant given for another item resolved this one.
	GrantID      string
	RequestedSeq int64
	// ResolvedSeq and ResolvedAt are those of the event that took the
	// approval out of pending.
	ResolvedSeq *int64
	RequestedAt time.Time
	ResolvedAt  *time.Time
	// AskReason and LapsedGrantID say why a call a grant covered asks again.
	AskReason     string
	LapsedGrantID string
}

// ApprovalFilter selects a tenant's approvals, newest request first. Empty
// fields do not filter.
type ApprovalFilter struct {
	TenantID string // required
	Status   string // pending, resolved, expired or cancelled
	RunID    string
	// ApprovalID keeps the approval of this id (apr_…) only.
	ApprovalID string
	// After is an opaque cursor returned by the previous page ("" = first page).
	After string
	Limit int
}

// SessionRecord is the aggregate of the runs of one platform session of a
// tenant.
type SessionRecord struct {
	TenantID          string
	PlatformSessionID string
	FirstRunID        string // earliest created (run id breaks ties)
	LastRunID         string // latest created
	LastRunStatus     string // status of LastRunID
	RunCount          int64
	FirstRunAt        time.Time // created_at of FirstRunID
	LastActivityAt    time.Time // latest occurredAt of any event of the runs
}

// StreamRun is a run of a session as the UI stream orders them.
type StreamRun struct {
	RunID     string
	Status    string
	CreatedAt time.Time
}

// Ended reports whether the run's status is terminal.
func (r StreamRun) Ended() bool { return events.Status(r.Status).Terminal() }
