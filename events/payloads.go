package events

import "encoding/json"

// Actor is who issued a command.
type Actor struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

// SandboxKey routes a run to its compute environment (seed 004 §10.1).
type SandboxKey struct {
	TenantID    string `json:"tenantId"`
	WorkspaceID string `json:"workspaceId"`
	AgentID     string `json:"agentId"`
	OwnerID     string `json:"ownerId"`
}

// UserInput is a user message given to a run.
type UserInput struct {
	Content string `json:"content"`
}

// RunAcceptedPayload is the payload of runtime.run.accepted (created → queued).
type RunAcceptedPayload struct {
	AgentID        string            `json:"agentId"`
	Input          UserInput         `json:"input"`
	SandboxKey     SandboxKey        `json:"sandboxKey"`
	ParentRunID    string            `json:"parentRunId,omitempty"`
	Metadata       map[string]string `json:"metadata,omitempty"`
	IdempotencyKey string            `json:"idempotencyKey"`
	Actor          Actor             `json:"actor"`
}

// RunStartedPayload is the payload of runtime.run.started (queued → running).
type RunStartedPayload struct {
	ExecutorID string `json:"executorId,omitempty"`
}

// PauseReason says why a run is paused.
type PauseReason string

// Pause reasons (DESIGN §2.3).
const (
	PauseAwaitingApproval           PauseReason = "awaiting_approval"
	PauseAwaitingUserInput          PauseReason = "awaiting_user_input"
	PauseAwaitingExternalToolResult PauseReason = "awaiting_external_tool_result"
	PauseAwaitingCheckpointRestore  PauseReason = "awaiting_checkpoint_restore"
)

// Valid reports whether r is a known pause reason.
func (r PauseReason) Valid() bool {
	switch r {
	case PauseAwaitingApproval, PauseAwaitingUserInput, PauseAwaitingExternalToolResult, PauseAwaitingCheckpointRestore:
		return true
	}
	return false
}

// RunPausedPayload is the payload of runtime.run.paused.
type RunPausedPayload struct {
	PauseReason PauseReason `json:"pauseReason"`
	ItemIDs     []string    `json:"itemIds,omitempty"`
}

// RunResumedPayload is the payload of runtime.run.resumed.
type RunResumedPayload struct{}

// RunCompletedPayload is the payload of runtime.run.completed.
type RunCompletedPayload struct {
	Output string `json:"output,omitempty"`
}

// Failure codes carried by runtime.run.failed (DESIGN §2.3).
const (
	FailModelError      = "model_error"
	FailBudgetExhausted = "budget_exhausted"
	FailRuntimeLost     = "runtime_lost"
	FailSandboxError    = "sandbox_error"
	FailInternal        = "internal"
)

// RunFailedPayload is the payload of runtime.run.failed.
type RunFailedPayload struct {
	ErrorCode string `json:"errorCode"`
	Message   string `json:"message,omitempty"`
}

// RunCancelledPayload is the payload of runtime.run.cancelled.
type RunCancelledPayload struct {
	Reason string `json:"reason,omitempty"`
}

// RunExpiredPayload is the payload of runtime.run.expired.
type RunExpiredPayload struct{}

// CheckpointRestoredPayload is the payload of runtime.run.checkpoint_restored:
// a new executor took over the run at LastSeq.
type CheckpointRestoredPayload struct {
	LastSeq    int64    `json:"lastSeq"`
	ExecutorID string   `json:"executorId,omitempty"`
	OpenItems  []string `json:"openItems,omitempty"`
}

// CommandAcceptedPayload records that the command passed admission and waits for a safe point.
type CommandAcceptedPayload struct {
	CommandType    string          `json:"commandType"`
	IdempotencyKey string          `json:"idempotencyKey"`
	Command        json.RawMessage `json:"command,omitempty"`
}

// CommandRejectedPayload records that the command was refused with a stable error code.
type CommandRejectedPayload struct {
	CommandType    string `json:"commandType"`
	IdempotencyKey string `json:"idempotencyKey"`
	Code           string `json:"code"`
	Message        string `json:"message,omitempty"`
}

// CommandAppliedPayload records that the command took effect.
type CommandAppliedPayload struct {
	CommandType    string `json:"commandType"`
	IdempotencyKey string `json:"idempotencyKey"`
	// CreatedRunID is the run a follow-up created in the same session.
	CreatedRunID string `json:"createdRunId,omitempty"`
}

// CommandNoEffectPayload records that the command was valid but there was nothing to do.
type CommandNoEffectPayload struct {
	CommandType    string `json:"commandType"`
	IdempotencyKey string `json:"idempotencyKey"`
	Reason         string `json:"reason,omitempty"`
}

// CommandDuplicatePayload records that the idempotency key was seen before for this run;
// nothing changed and the original outcome stands.
type CommandDuplicatePayload struct {
	CommandType       string `json:"commandType"`
	IdempotencyKey    string `json:"idempotencyKey"`
	OriginalCommandID string `json:"originalCommandId"`
	OriginalOutcome   string `json:"originalOutcome"`
	OriginalCode      string `json:"originalCode,omitempty"`
}

// ItemType names a kind of RuntimeItem (seed 004 §7.2).
type ItemType string

// Item types.
const (
	ItemUserMessage          ItemType = "user_message"
	ItemAssistantMessage     ItemType = "assistant_message"
	ItemReasoning            ItemType = "reasoning"
	ItemPlan                 ItemType = "plan"
	ItemCommandExecution     ItemType = "command_execution"
	ItemFileChange           ItemType = "file_change"
	ItemToolCall             ItemType = "tool_call"
	ItemMCPToolCall          ItemType = "mcp_tool_call"
	ItemClarificationRequest ItemType = "clarification_request"
	ItemContextCompaction    ItemType = "context_compaction"
)

// ItemStartedPayload opens an item.
type ItemStartedPayload struct {
	ItemType ItemType        `json:"itemType"`
	Content  string          `json:"content,omitempty"`
	Data     json.RawMessage `json:"data,omitempty"`
}

// ItemDeltaPayload carries a coalesced piece of streamed text.
type ItemDeltaPayload struct {
	Delta string `json:"delta"`
}

// Item completion statuses.
const (
	ItemStatusCompleted = "completed"
	ItemStatusTruncated = "truncated"
)

// ItemCompletedPayload closes an item with its full content.
type ItemCompletedPayload struct {
	ItemType ItemType        `json:"itemType"`
	Status   string          `json:"status,omitempty"`
	Content  string          `json:"content,omitempty"`
	Data     json.RawMessage `json:"data,omitempty"`
}

// ItemFailedPayload closes an item that failed.
type ItemFailedPayload struct {
	ItemType  ItemType `json:"itemType"`
	ErrorCode string   `json:"errorCode"`
	Message   string   `json:"message,omitempty"`
}

// ItemAwaitingApprovalPayload marks an item as waiting for a human decision.
type ItemAwaitingApprovalPayload struct {
	ItemType ItemType        `json:"itemType"`
	ToolName string          `json:"toolName,omitempty"`
	Input    json.RawMessage `json:"input,omitempty"`
}

// ApprovalDecisionPayload records a human decision on an item.
type ApprovalDecisionPayload struct {
	Decision string `json:"decision"`
	Scope    string `json:"scope"`
	Reason   string `json:"reason,omitempty"`
	Actor    Actor  `json:"actor"`
}

// PermissionGrantPayload records a grant that skips later approvals.
type PermissionGrantPayload struct {
	Scope    string `json:"scope"`
	ToolName string `json:"toolName"`
}

// ContextCompactedPayload records a compaction artifact (seed 004 §8.1).
type ContextCompactedPayload struct {
	CutoffEventSeq int64           `json:"cutoffEventSeq"`
	Summary        json.RawMessage `json:"summary,omitempty"`
}

// SnapshotFrozenPayload records the capability snapshot of a run.
type SnapshotFrozenPayload struct {
	Hash     string          `json:"hash"`
	Snapshot json.RawMessage `json:"snapshot,omitempty"`
}
