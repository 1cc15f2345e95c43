package events

import (
	"encoding/json"
	"fmt"
)

// Actor is who issued a command.
type Actor struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

// SandboxKey routes a run to its compute environment.
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
	// SessionGrants are the platform_session grants the run inherits.
	SessionGrants []PermissionGrant `json:"sessionGrants,omitempty"`
	// Options are the per-run options the CreateRun asked for (nil: the
	// profile's defaults); the capability snapshot freezes the effective ones.
	Options *RunOptions `json:"options,omitempty"`
	// InputID is the input id of the message the run answers when another
	// command's input created it (a follow-up, a session message: its
	// Idempotency-Key); empty when the create's own key is the input id.
	InputID string `json:"inputId,omitempty"`
	// InputIDs are the input ids of the messages the run answers when it
	// answers several (an interrupt's next run), copied from CreateRun.
	InputIDs []string `json:"inputIds,omitempty"`
	// Fingerprint identifies what the command asked for, so a later use of
	// the same idempotency key for something else is refused; empty in
	// older logs.
	Fingerprint string `json:"fingerprint,omitempty"`
}

// RunStartedPayload is the payload of runtime.run.started (queued → running).
type RunStartedPayload struct {
	ExecutorID string `json:"executorId,omitempty"`
}

// PauseReason says why a run is paused.
type PauseReason string

// Pause reasons.
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

// RunQueuedPayload is the payload of runtime.run.queued: the run's place
// in its sandbox key's queue, 1 being the next to start. A run records it
// when it joins the queue and again each time it moves up.
type RunQueuedPayload struct {
	Position int `json:"position"`
}

// SandboxAttachedPayload is the payload of runtime.sandbox.attached: the
// run's tools run in the sandbox Provider keeps under SandboxID. It is
// recorded (committed before the tool runs) when a run first attaches to a
// sandbox with an id, and again if it ever attaches to another. A new owner
// of the run reconnects to that sandbox; when it is gone the run fails with
// sandbox_error rather than going on in another one.
type SandboxAttachedPayload struct {
	// Provider is the compute provider's name (a plugin's id).
	Provider string `json:"provider"`
	// SandboxID is the provider's id of the sandbox.
	SandboxID string `json:"sandboxId"`
}

// RunCompletedPayload is the payload of runtime.run.completed.
type RunCompletedPayload struct {
	Output string `json:"output,omitempty"`
}

// Failure codes carried by runtime.run.failed.
const (
	FailModelError      = "model_error"
	FailBudgetExhausted = "budget_exhausted"
	FailRuntimeLost     = "runtime_lost"
	FailSandboxError    = "sandbox_error"
	FailInternal        = "internal"
	// FailHistoryUnavailable: events the run needs (its own, or a follow-up's
	// earlier runs) are no longer on the events topic (retention deleted them).
	FailHistoryUnavailable = "history_unavailable"
	// FailCapabilityUnavailable: a capability the run's profile names could
	// not be resolved when the run started (an MCP server that could not be
	// reached or listed, a skill with no stored version in range); the
	// message says which and why.
	FailCapabilityUnavailable = "capability_unavailable"
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

// RunExpiredPayload is the payload of runtime.run.expired: the run stayed
// paused longer than its pause TTL.
type RunExpiredPayload struct {
	PauseReason PauseReason `json:"pauseReason,omitempty"`
	PausedAt    int64       `json:"pausedAt,omitempty"` // occurredAt of the pause (ms)
	PauseTTLMs  int64       `json:"pauseTtlMs,omitempty"`
}

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
	// Intent is what a session message (AppendUserInput, intent auto)
	// became on this run: steer, clarification or queued (kept pending while
	// the run waits for an approval, applied as a steer once it resumes).
	// Empty for every other command.
	Intent string `json:"intent,omitempty"`
	// Actor is who sent the command; nil in logs written before outcomes kept it.
	Actor *Actor `json:"actor,omitempty"`
	// Fingerprint identifies what the command asked for, so a later use of
	// the same idempotency key for something else is refused; empty in
	// older logs.
	Fingerprint string `json:"fingerprint,omitempty"`
}

// CommandRejectedPayload records that the command was refused with a stable error code.
type CommandRejectedPayload struct {
	CommandType    string `json:"commandType"`
	IdempotencyKey string `json:"idempotencyKey"`
	Code           Code   `json:"code"`
	Message        string `json:"message,omitempty"`
	// Actor is who sent the command; nil in older logs and when the actor itself was invalid.
	Actor *Actor `json:"actor,omitempty"`
	// Fingerprint identifies what the command asked for, so a later use of
	// the same idempotency key for something else is refused; empty in
	// older logs.
	Fingerprint string `json:"fingerprint,omitempty"`
	// GrantID is the grant of a RevokePermissionGrant refused because its
	// run does not exist yet: a revoke can reach a run before the create it
	// was sent after, and the run, when its create lands, does not inherit
	// the grant (RunState.PreRevokedGrants).
	GrantID string `json:"grantId,omitempty"`
}

// CommandAppliedPayload records that the command took effect.
type CommandAppliedPayload struct {
	CommandType    string `json:"commandType"`
	IdempotencyKey string `json:"idempotencyKey"`
	// CreatedRunID is the run a follow-up created in the same session.
	CreatedRunID string `json:"createdRunId,omitempty"`
	// Intent is what an applied session message became (follow_up, steer,
	// clarification); empty for every other command.
	Intent string `json:"intent,omitempty"`
	// Actor is who sent the command; nil in older logs (also for a command accepted in one).
	Actor *Actor `json:"actor,omitempty"`
	// Fingerprint identifies what the command asked for, so a later use of
	// the same idempotency key for something else is refused; empty in
	// older logs.
	Fingerprint string `json:"fingerprint,omitempty"`
}

// CommandNoEffectPayload records that the command was valid but there was nothing to do.
type CommandNoEffectPayload struct {
	CommandType    string `json:"commandType"`
	IdempotencyKey string `json:"idempotencyKey"`
	Reason         string `json:"reason,omitempty"`
	// Actor is who sent the command; nil in older logs (also for a command accepted in one).
	Actor *Actor `json:"actor,omitempty"`
	// Fingerprint identifies what the command asked for, so a later use of
	// the same idempotency key for something else is refused; empty in
	// older logs.
	Fingerprint string `json:"fingerprint,omitempty"`
}

// CommandDuplicatePayload records that the idempotency key was seen before for this run;
// nothing changed and the original outcome stands.
type CommandDuplicatePayload struct {
	CommandType       string  `json:"commandType"`
	IdempotencyKey    string  `json:"idempotencyKey"`
	OriginalCommandID string  `json:"originalCommandId"`
	OriginalOutcome   Outcome `json:"originalOutcome"`
	OriginalCode      Code    `json:"originalCode,omitempty"`
	// OriginalIntent is what the original session message became, and
	// CreatedRunID the run it created (a follow-up); empty for other commands.
	OriginalIntent string `json:"originalIntent,omitempty"`
	CreatedRunID   string `json:"createdRunId,omitempty"`
	// Actor is who sent the repeated command; nil in logs written before outcomes kept it.
	Actor *Actor `json:"actor,omitempty"`
}

// CommandOutcomeFields are the fields of the runtime.command.* payloads
// (accepted, rejected, no_effect, applied, duplicate) that a reader of any
// outcome needs, as plain strings: one shape for every view that turns an
// outcome event into a command's record.
type CommandOutcomeFields struct {
	CommandType       string `json:"commandType"`
	IdempotencyKey    string `json:"idempotencyKey"`
	Code              string `json:"code"`
	Message           string `json:"message"`
	Reason            string `json:"reason"`
	OriginalCommandID string `json:"originalCommandId"`
	OriginalOutcome   string `json:"originalOutcome"`
	OriginalCode      string `json:"originalCode"`
	CreatedRunID      string `json:"createdRunId"`
	Intent            string `json:"intent"`
	OriginalIntent    string `json:"originalIntent"`
}

// DuplicateMessage is the message of a command answered duplicate: the
// command that used its idempotency key first, and that one's outcome.
func (f CommandOutcomeFields) DuplicateMessage() string {
	return fmt.Sprintf("idempotency key already used by command %s (%s)", f.OriginalCommandID, f.OriginalOutcome)
}

// ItemType names a kind of RuntimeItem.
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
	// Truncated marks the last delta of an item whose streamed output
	// reached its cap (limits.maxStreamedOutputBytes): Delta then says so in
	// words, OmittedBytes counts the output that was not streamed, and the
	// item's closing event holds the result (and its outputRef when the
	// output was offloaded).
	Truncated    bool  `json:"truncated,omitempty"`
	OmittedBytes int64 `json:"omittedBytes,omitempty"`
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
	// RuleID is the policy rule that blocked the call, for blocked_by_policy.
	RuleID string `json:"ruleId,omitempty"`
}

// ItemAwaitingApprovalPayload marks an item as waiting for a human decision:
// policy rule RuleID asked for approval of this exact call.
type ItemAwaitingApprovalPayload struct {
	ItemType ItemType        `json:"itemType"`
	ToolName string          `json:"toolName,omitempty"`
	Input    json.RawMessage `json:"input,omitempty"`
	// ApprovalID names the approval request (apr_…), derived from the item.
	ApprovalID string `json:"approvalId,omitempty"`
	// RuleID is the policy rule that requires approval; grants are per rule.
	RuleID string `json:"ruleId,omitempty"`
	// Reason says in words why the call needs approval.
	Reason string `json:"reason,omitempty"`
	// AskReason says why a call a grant covered asks again: GrantRevoked
	// or GrantExpired, with GrantID the grant that no longer covers it.
	// Empty for a call no grant ever covered.
	AskReason string `json:"askReason,omitempty"`
	GrantID   string `json:"grantId,omitempty"`
}

// Approval decisions and grant scopes.
const (
	DecisionAllow = "allow"
	DecisionDeny  = "deny"

	ScopeItem            = "item"
	ScopeRun             = "run"
	ScopePlatformSession = "platform_session"
)

// ApprovalDecisionPayload records a human decision on an item. The
// envelope's itemId names the item and commandId the command that decided it.
type ApprovalDecisionPayload struct {
	Decision string `json:"decision"`
	Scope    string `json:"scope"`
	Reason   string `json:"reason,omitempty"`
	Actor    Actor  `json:"actor"`
	// ApprovalID is the approval request decided.
	ApprovalID string `json:"approvalId,omitempty"`
	// GrantID is set when an existing grant, not this command's decision,
	// covered the item (a run-scoped allow given for a sibling call).
	GrantID string `json:"grantId,omitempty"`
}

// PermissionGrant lets later calls of ToolName that policy rule RuleID would
// send for approval run without asking.
type PermissionGrant struct {
	GrantID  string `json:"grantId"`
	Scope    string `json:"scope"` // run | platform_session
	ToolName string `json:"toolName"`
	RuleID   string `json:"ruleId"`
	// RunID and ItemID are where the grant was given; Actor gave it.
	RunID  string `json:"runId,omitempty"`
	ItemID string `json:"itemId,omitempty"`
	Actor  Actor  `json:"actor"`
	// ExpiresAt is when a grant given with a TTL stops covering calls
	// (Unix ms, from the deciding event's time); 0: it does not expire.
	ExpiresAt int64 `json:"expiresAt,omitempty"`
}

// Covers reports whether the grant lets a call of tool that rule ruleID
// sends for approval run without asking.
func (g PermissionGrant) Covers(tool, ruleID string) bool {
	return g.ToolName == tool && g.RuleID == ruleID
}

// PermissionGrantPayload is the payload of runtime.permission_grant.applied.
type PermissionGrantPayload = PermissionGrant

// Compaction triggers.
const (
	CompactBeforeModelRequest = "before_model_request_threshold"
	CompactOverflowRecovery   = "context_overflow_recovery"
	CompactPostToolResult     = "post_tool_result_threshold"
	CompactManual             = "manual_compact"
)

// SeqRange is an inclusive range of a run's seqs.
type SeqRange struct {
	FromSeq int64 `json:"fromSeq"`
	ToSeq   int64 `json:"toSeq"`
}

// CompactionSummary is the structured summary a compaction keeps.
type CompactionSummary struct {
	UserGoal          string   `json:"userGoal"`
	ExecutedDecisions []string `json:"executedDecisions"`
	ModifiedFiles     []string `json:"modifiedFiles"`
	PendingTasks      []string `json:"pendingTasks"`
	// Notes holds what the model said that did not fit the fields (a
	// summary that was not valid JSON is kept here whole).
	Notes string `json:"notes,omitempty"`
}

// TokenStats are estimated context sizes before and after a compaction.
type TokenStats struct {
	BeforeTokens int `json:"beforeTokens"`
	AfterTokens  int `json:"afterTokens"`
}

// ContextCompactedPayload is a compaction artifact. The
// context projector replaces everything up to CutoffEventSeq (and the
// session's earlier runs) by Summary, keeping RetainedItemIDs verbatim.
type ContextCompactedPayload struct {
	ArtifactID      string            `json:"artifactId"`
	CutoffEventSeq  int64             `json:"cutoffEventSeq"`
	TriggerReason   string            `json:"triggerReason"`
	SourceRange     SeqRange          `json:"sourceRange"`
	Summary         CompactionSummary `json:"summary"`
	RetainedItemIDs []string          `json:"retainedItemIds"`
	TokenStats      TokenStats        `json:"tokenStats"`
	// Usage is the token accounting of the summarising model call.
	Usage *Usage `json:"usage,omitempty"`
}

// SnapshotFrozenPayload records the capability snapshot of a run: everything the run may use, frozen when it starts. Hash is
// "sha256:" and the hex digest of Snapshot's bytes.
type SnapshotFrozenPayload struct {
	Hash     string          `json:"hash"`
	Snapshot json.RawMessage `json:"snapshot"`
}

// SnapshotGovernance is the part of a capability snapshot the state machine
// reads: how long the run may stay paused and the grants it started with.
type SnapshotGovernance struct {
	PauseTTLMs int64             `json:"pauseTtlMs,omitempty"`
	Grants     []PermissionGrant `json:"grants,omitempty"`
	// Options are the run's effective per-run options; absent in
	// snapshots frozen before runs had options.
	Options *RunOptions `json:"options,omitempty"`
}
