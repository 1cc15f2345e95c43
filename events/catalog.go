package events

import "fmt"

// Type names an event in the catalog. Names are never renamed; new ones may be added.
type Type string

// The event catalog.
const (
	RunAccepted           Type = "runtime.run.accepted"
	RunStarted            Type = "runtime.run.started"
	RunPaused             Type = "runtime.run.paused"
	RunResumed            Type = "runtime.run.resumed"
	RunCompleted          Type = "runtime.run.completed"
	RunFailed             Type = "runtime.run.failed"
	RunCancelled          Type = "runtime.run.cancelled"
	RunExpired            Type = "runtime.run.expired"
	RunCheckpointRestored Type = "runtime.run.checkpoint_restored"
	// RunQueued: the run waits for its sandbox key (position 1 is next to
	// start): accepted while another run holds the key, resumed from a pause
	// while another run holds it, or moved up the key's queue.
	RunQueued Type = "runtime.run.queued"

	CommandAccepted  Type = "runtime.command.accepted"
	CommandRejected  Type = "runtime.command.rejected"
	CommandApplied   Type = "runtime.command.applied"
	CommandNoEffect  Type = "runtime.command.no_effect"
	CommandDuplicate Type = "runtime.command.duplicate"

	ItemStarted          Type = "runtime.item.started"
	ItemDelta            Type = "runtime.item.delta"
	ItemCompleted        Type = "runtime.item.completed"
	ItemFailed           Type = "runtime.item.failed"
	ItemAwaitingApproval Type = "runtime.item.awaiting_approval"

	ApprovalDecisionSubmitted Type = "runtime.approval.decision_submitted"
	PermissionGrantApplied    Type = "runtime.permission_grant.applied"
	PermissionGrantRevoked    Type = "runtime.permission_grant.revoked"
	ContextCompacted          Type = "runtime.context.compacted"
	CapabilitySnapshotFrozen  Type = "runtime.capability.snapshot_frozen"
	// SandboxAttached: the run's tools run in the sandbox its provider
	// keeps under an id of its own (a provider plugin's); a new owner of
	// the run reconnects to exactly that one.
	SandboxAttached Type = "runtime.sandbox.attached"
)

// Catalog lists every event type in a stable order.
func Catalog() []Type {
	return append([]Type(nil), catalogOrder...)
}

var catalogOrder = []Type{
	RunAccepted, RunStarted, RunPaused, RunResumed, RunCompleted, RunFailed, RunCancelled, RunExpired,
	RunCheckpointRestored,
	CommandAccepted, CommandRejected, CommandApplied, CommandNoEffect, CommandDuplicate,
	ItemStarted, ItemDelta, ItemCompleted, ItemFailed, ItemAwaitingApproval,
	ApprovalDecisionSubmitted, PermissionGrantApplied, ContextCompacted, CapabilitySnapshotFrozen,
	PermissionGrantRevoked, RunQueued, SandboxAttached,
}

var payloadFactories = map[Type]func() any{
	RunAccepted:               func() any { return new(RunAcceptedPayload) },
	RunStarted:                func() any { return new(RunStartedPayload) },
	RunPaused:                 func() any { return new(RunPausedPayload) },
	RunResumed:                func() any { return new(RunResumedPayload) },
	RunCompleted:              func() any { return new(RunCompletedPayload) },
	RunFailed:                 func() any { return new(RunFailedPayload) },
	RunCancelled:              func() any { return new(RunCancelledPayload) },
	RunExpired:                func() any { return new(RunExpiredPayload) },
	RunCheckpointRestored:     func() any { return new(CheckpointRestoredPayload) },
	RunQueued:                 func() any { return new(RunQueuedPayload) },
	CommandAccepted:           func() any { return new(CommandAcceptedPayload) },
	CommandRejected:           func() any { return new(CommandRejectedPayload) },
	CommandApplied:            func() any { return new(CommandAppliedPayload) },
	CommandNoEffect:           func() any { return new(CommandNoEffectPayload) },
	CommandDuplicate:          func() any { return new(CommandDuplicatePayload) },
	ItemStarted:               func() any { return new(ItemStartedPayload) },
	ItemDelta:                 func() any { return new(ItemDeltaPayload) },
	ItemCompleted:             func() any { return new(ItemCompletedPayload) },
	ItemFailed:                func() any { return new(ItemFailedPayload) },
	ItemAwaitingApproval:      func() any { return new(ItemAwaitingApprovalPayload) },
	ApprovalDecisionSubmitted: func() any { return new(ApprovalDecisionPayload) },
	PermissionGrantApplied:    func() any { return new(PermissionGrantPayload) },
	PermissionGrantRevoked:    func() any { return new(PermissionGrantRevokedPayload) },
	ContextCompacted:          func() any { return new(ContextCompactedPayload) },
	CapabilitySnapshotFrozen:  func() any { return new(SnapshotFrozenPayload) },
	SandboxAttached:           func() any { return new(SandboxAttachedPayload) },
}

// NewPayload returns a pointer to a zero payload of the type registered for t.
func NewPayload(t Type) (any, error) {
	f, ok := payloadFactories[t]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownType, t)
	}
	return f(), nil
}

// Known reports whether t is in the catalog.
func Known(t Type) bool {
	_, ok := payloadFactories[t]
	return ok
}

// IsCommandOutcome reports whether t records the outcome of a command.
func IsCommandOutcome(t Type) bool {
	switch t {
	case CommandAccepted, CommandRejected, CommandApplied, CommandNoEffect, CommandDuplicate:
		return true
	default:
		return false
	}
}
