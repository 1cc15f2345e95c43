package client

import "github.com/xbot-runtime/xbot/events"

// UserInput is a user's message.
type UserInput struct {
	Content string `json:"content"`
}

// SandboxKeyRequest routes a new run to its compute environment; the tenant
// and agent come from the token and the agent id.
type SandboxKeyRequest struct {
	WorkspaceID string `json:"workspaceId,omitempty"`
	OwnerID     string `json:"ownerId,omitempty"`
}

// CreateRunRequest is the body of POST /v1/runs.
type CreateRunRequest struct {
	AgentID           string             `json:"agentId"`
	Input             UserInput          `json:"input"`
	PlatformSessionID string             `json:"platformSessionId,omitempty"`
	SandboxKey        *SandboxKeyRequest `json:"sandboxKey,omitempty"`
	ParentRunID       string             `json:"parentRunId,omitempty"`
	Metadata          map[string]string  `json:"metadata,omitempty"`
	// Options are the per-run options (nil: the profile's defaults).
	Options *events.RunOptions `json:"options,omitempty"`
}

// AppendInputRequest is the body of POST /v1/runs/{runId}/inputs.
type AppendInputRequest struct {
	// Intent is steer, follow_up or clarification.
	Intent        string `json:"intent"`
	Content       string `json:"content"`
	InteractionID string `json:"interactionId,omitempty"`
}

// Outcomes of a command, as CommandResult.Outcome and Command.Outcome name
// them.
const (
	OutcomePending   = "pending" // the API's wait ran out; the command is queued
	OutcomeAccepted  = string(events.OutcomeAccepted)
	OutcomeRejected  = string(events.OutcomeRejected)
	OutcomeDuplicate = string(events.OutcomeDuplicate)
	OutcomeNoEffect  = string(events.OutcomeNoEffect)
	OutcomeApplied   = string(events.OutcomeApplied)
)

// CommandResult is the answer of every command endpoint.
type CommandResult struct {
	RunID              string `json:"runId"`
	CommandID          string `json:"commandId"`
	Outcome            string `json:"outcome"`
	Code               string `json:"code,omitempty"`
	Detail             string `json:"detail,omitempty"`
	OriginalCommandID  string `json:"originalCommandId,omitempty"`
	DuplicateCommandID string `json:"duplicateCommandId,omitempty"`
	OriginalOutcome    string `json:"originalOutcome,omitempty"`
	OriginalCode       string `json:"originalCode,omitempty"`
	CreatedRunID       string `json:"createdRunId,omitempty"`
	// IdempotencyKey is the key the command was sent under (the caller's,
	// or the one the client generated), set also when the call failed: send
	// the command again under it. Not part of the answer's JSON.
	IdempotencyKey string `json:"-"`
}

// SandboxKey is a run's full sandbox key, as the log records it.
type SandboxKey = events.SandboxKey

// Usage is a run's token accounting.
type Usage struct {
	ModelCalls       int64 `json:"modelCalls"`
	PromptTokens     int64 `json:"promptTokens"`
	CompletionTokens int64 `json:"completionTokens"`
	TotalTokens      int64 `json:"totalTokens"`
	Compactions      int64 `json:"compactions"`
}

// Run is the answer of GET /v1/runs/{runId}.
type Run struct {
	RunID             string            `json:"runId"`
	TenantID          string            `json:"tenantId"`
	PlatformSessionID string            `json:"platformSessionId,omitempty"`
	AgentID           string            `json:"agentId"`
	ParentRunID       string            `json:"parentRunId,omitempty"`
	Status            string            `json:"status"`
	PauseReason       string            `json:"pauseReason,omitempty"`
	ErrorCode         string            `json:"errorCode,omitempty"`
	CancelReason      string            `json:"cancelReason,omitempty"`
	Input             UserInput         `json:"input"`
	SandboxKey        SandboxKey        `json:"sandboxKey"`
	Metadata          map[string]string `json:"metadata,omitempty"`
	LastSeq           int64             `json:"lastSeq"`
	CreatedAt         int64             `json:"createdAt"`
	UpdatedAt         int64             `json:"updatedAt"`
	Usage             Usage             `json:"usage"`
	QueuePosition     *int64            `json:"queuePosition,omitempty"`
	SnapshotHash      string            `json:"snapshotHash,omitempty"`
}

// Event is one envelope of a run's log, exactly as committed.
type Event = events.Envelope

// EventPage is the answer of GET /v1/runs/{runId}/events.
type EventPage struct {
	Events []Event `json:"events"`
	// NextAfterSeq is the after_seq of the next page.
	NextAfterSeq int64 `json:"nextAfterSeq"`
}

// Command is the answer of GET /v1/commands/{commandId}.
type Command struct {
	CommandID         string `json:"commandId"`
	RunID             string `json:"runId"`
	TenantID          string `json:"tenantId"`
	Type              string `json:"type"`
	IdempotencyKey    string `json:"idempotencyKey"`
	Outcome           string `json:"outcome"`
	FirstOutcome      string `json:"firstOutcome"`
	Code              string `json:"code,omitempty"`
	Message           string `json:"message,omitempty"`
	OriginalCommandID string `json:"originalCommandId,omitempty"`
	OriginalOutcome   string `json:"originalOutcome,omitempty"`
	OriginalCode      string `json:"originalCode,omitempty"`
	CreatedRunID      string `json:"createdRunId,omitempty"`
	Seq               int64  `json:"seq"`
	UpdatedAt         int64  `json:"updatedAt"`
}

// ProjectorLag is how far one view is behind the events topic.
type ProjectorLag struct {
	Name       string          `json:"name"`
	Lag        int64           `json:"lag"`
	Partitions map[int32]int64 `json:"partitions"`
}
