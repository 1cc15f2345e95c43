package postgres

import (
	"encoding/json"
	"time"
)

// Run is one row of the runs read model.
type Run struct {
	RunID             string          `json:"runId"`
	TenantID          string          `json:"tenantId"`
	PlatformSessionID string          `json:"platformSessionId,omitempty"`
	AgentID           string          `json:"agentId"`
	ParentRunID       string          `json:"parentRunId,omitempty"`
	Status            string          `json:"status"`
	PauseReason       string          `json:"pauseReason,omitempty"`
	ErrorCode         string          `json:"errorCode,omitempty"`
	CancelReason      string          `json:"cancelReason,omitempty"`
	Input             json.RawMessage `json:"input"`
	SandboxKey        json.RawMessage `json:"sandboxKey"`
	Metadata          json.RawMessage `json:"metadata,omitempty"`
	LastSeq           int64           `json:"lastSeq"`
	CreatedAt         time.Time       `json:"createdAt"`
	UpdatedAt         time.Time       `json:"updatedAt"`
	// SnapshotHash is the hash of the run's capability snapshot, once frozen
	// (runtime.capability.snapshot_frozen).
	SnapshotHash string `json:"snapshotHash,omitempty"`
	Usage        Usage  `json:"usage"`
	// AcceptedPartition and AcceptedOffset are the position of the run's
	// runtime.run.accepted in the events topic (-1 when projected before
	// they were kept): the order in which the runs of a sandbox key start.
	AcceptedPartition int32 `json:"acceptedPartition"`
	AcceptedOffset    int64 `json:"acceptedOffset"`
	// QueuePosition is set for a queued run only, when it is read: how many
	// runs of its sandbox key are ahead of it, the active (running or
	// paused) one included: 1 means it starts next, once the one run ahead
	// is done; 0 means nothing is ahead and it is about to start.
	QueuePosition *int64 `json:"queuePosition,omitempty"`
}

// Usage is the token accounting of a run's model calls.
type Usage struct {
	// ModelCalls counts the agent loop's completed model calls
	// (assistant_message items).
	ModelCalls int64 `json:"modelCalls"`
	// PromptTokens, CompletionTokens and TotalTokens sum the usage of the
	// model calls and of the compactions' summarising calls.
	PromptTokens     int64 `json:"promptTokens"`
	CompletionTokens int64 `json:"completionTokens"`
	TotalTokens      int64 `json:"totalTokens"`
	// Compactions counts runtime.context.compacted events.
	Compactions int64 `json:"compactions"`
}

// Event is one row of run_events: a committed event as it was on the log.
type Event struct {
	RunID             string          `json:"runId"`
	Seq               int64           `json:"seq"`
	EventID           string          `json:"eventId"`
	Type              string          `json:"type"`
	TenantID          string          `json:"tenantId"`
	PlatformSessionID string          `json:"platformSessionId,omitempty"`
	ItemID            string          `json:"itemId,omitempty"`
	CommandID         string          `json:"commandId,omitempty"`
	OccurredAt        int64           `json:"occurredAt"`
	EmittedAt         int64           `json:"emittedAt"`
	Envelope          json.RawMessage `json:"envelope"` // the full event envelope, byte for byte as decoded
}

// Command is one row of the commands read model: a command's latest outcome.
type Command struct {
	CommandID         string `json:"commandId"`
	RunID             string `json:"runId"`
	TenantID          string `json:"tenantId"`
	Type              string `json:"type"`
	IdempotencyKey    string `json:"idempotencyKey"`
	Outcome           string `json:"outcome"` // accepted | rejected | duplicate | no_effect | applied
	FirstOutcome      string `json:"firstOutcome"`
	Code              string `json:"code,omitempty"`
	Message           string `json:"message,omitempty"`
	OriginalCommandID string `json:"originalCommandId,omitempty"` // set for duplicates
	OriginalOutcome   string `json:"originalOutcome,omitempty"`   // duplicates: the original command's outcome
	OriginalCode      string `json:"originalCode,omitempty"`      // duplicates: the original command's code, if any
	// CreatedRunID is the run the command created in its session (an applied
	// follow-up: runtime.command.applied createdRunId); for a duplicate of
	// such a command, the original's, as GetCommand reads it.
	CreatedRunID string    `json:"createdRunId,omitempty"`
	Seq          int64     `json:"seq"` // seq of the latest outcome event
	UpdatedAt    time.Time `json:"updatedAt"`
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
