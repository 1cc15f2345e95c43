package events

import (
	"errors"
	"fmt"
	"slices"
)

// Fold applies one event to a run's state and returns the new state. It never
// modifies s. It fails with *SeqGapError when e.Seq is not s.LastSeq+1, with
// *IllegalTransitionError when the state does not allow the event, and with
// *PayloadError when the payload is malformed.
func Fold(s RunState, e Envelope) (RunState, error) {
	n, _, err := fold(s, e)
	return n, err
}

// FoldShared is Fold that also returns e keeping its decoded payload when
// it is of an event that opens the run or changes an item (sharedTypes),
// for readers of e in this process (SharedPayload).
func FoldShared(s RunState, e Envelope) (RunState, Envelope, error) {
	n, p, err := fold(s, e)
	if err == nil && sharedTypes[e.Type] {
		e.shared = p
	}
	return n, e, err
}

// sharedTypes are the events whose payloads FoldShared keeps: those an
// agent loop reads its items from. The others (deltas, decisions,
// outcomes, snapshots) would only hold memory for the run's life.
var sharedTypes = map[Type]bool{RunAccepted: true, ItemStarted: true, ItemCompleted: true, ItemFailed: true,
	ItemAwaitingApproval: true}

// fold is Fold, also returning e's decoded payload.
func fold(s RunState, e Envelope) (RunState, any, error) {
	if e.Seq != s.LastSeq+1 {
		return s, nil, &SeqGapError{RunID: e.RunID, Expected: s.LastSeq + 1, Actual: e.Seq}
	}
	if s.RunID != "" && e.RunID != s.RunID {
		return s, nil, &IllegalTransitionError{RunID: e.RunID, Seq: e.Seq, From: s.Status, Type: e.Type,
			Reason: fmt.Sprintf("event belongs to run %s", s.RunID)}
	}
	if !Known(e.Type) {
		return s, nil, fmt.Errorf("run %s seq %d: %w: %q", e.RunID, e.Seq, ErrUnknownType, e.Type)
	}
	if !Allowed(s.Status, e.Type) {
		return s, nil, &IllegalTransitionError{RunID: e.RunID, Seq: e.Seq, From: s.Status, Type: e.Type}
	}
	p, err := e.DecodePayload()
	if err != nil {
		return s, nil, err
	}
	if to, ok := StatusAfter(e.Type); ok && to.Terminal() && len(s.OpenItems()) > 0 {
		return s, nil, &IllegalTransitionError{RunID: e.RunID, Seq: e.Seq, From: s.Status, Type: e.Type,
			Reason: fmt.Sprintf("item %s is still open; close every item before the run ends", s.OpenItems()[0].ID)}
	}
	n := s.fork()
	if err := apply(n, e, p); err != nil {
		var pe *PayloadError
		if errors.As(err, &pe) {
			return s, nil, err
		}
		return s, nil, &IllegalTransitionError{RunID: e.RunID, Seq: e.Seq, From: s.Status, Type: e.Type, Reason: err.Error()}
	}
	n.RunID, n.LastSeq, n.UpdatedAt = e.RunID, e.Seq, e.OccurredAt
	if next, ok := StatusAfter(e.Type); ok {
		n.Status = next
		if next != StatusPaused {
			n.PauseReason = ""
		}
		if next != StatusQueued {
			n.Requeued, n.QueuePosition = false, 0
		}
	}
	return *n, p, nil
}

// FoldAll folds events in order from s.
func FoldAll(s RunState, evs []Envelope) (RunState, error) {
	for _, e := range evs {
		var err error
		if s, err = Fold(s, e); err != nil {
			return s, err
		}
	}
	return s, nil
}

func apply(n *RunState, e Envelope, p any) error {
	switch v := p.(type) {
	case *RunAcceptedPayload:
		return applyAccepted(n, e, v)
	case *RunQueuedPayload:
		return applyQueued(n, e, v)
	case *RunStartedPayload, *RunResumedPayload, *SnapshotFrozenPayload:
		return applyStart(n, e, p)
	case *RunPausedPayload:
		if !v.PauseReason.Valid() {
			return &PayloadError{Type: e.Type, Seq: e.Seq, Err: fmt.Errorf("pauseReason %q is not valid", v.PauseReason)}
		}
		n.PauseReason, n.PausedAt = v.PauseReason, e.OccurredAt
	case *PermissionGrantPayload:
		if v.GrantID == "" || v.ToolName == "" || (v.Scope != ScopeRun && v.Scope != ScopePlatformSession) {
			return &PayloadError{Type: e.Type, Seq: e.Seq, Err: errors.New("a grant needs grantId, toolName and scope run or platform_session")}
		}
		for _, g := range n.Grants {
			if g.GrantID == v.GrantID {
				return fmt.Errorf("grant %s is already applied", v.GrantID)
			}
		}
		n.Grants = append(n.Grants, *v)
	case *PermissionGrantRevokedPayload:
		return applyRevoked(n, e, v)
	case *RunFailedPayload:
		if v.ErrorCode == "" {
			return &PayloadError{Type: e.Type, Seq: e.Seq, Err: errors.New("errorCode is required")}
		}
		n.ErrorCode = v.ErrorCode
	case *RunCancelledPayload:
		n.CancelReason = v.Reason
	case *SandboxAttachedPayload:
		return applySandbox(n, e, v)
	case *CommandAcceptedPayload:
		return applyCommandAccepted(n, e, v)
	case *CommandRejectedPayload:
		remember(n, v.IdempotencyKey, CommandRecord{CommandID: e.CommandID, Type: v.CommandType, Outcome: OutcomeRejected, Code: v.Code, Fingerprint: v.Fingerprint})
		preRevoke(n, v.GrantID)
	case *CommandNoEffectPayload:
		// A pending command closed without effect (its run ended first) is no
		// longer pending.
		unpend(n, e.CommandID)
		remember(n, v.IdempotencyKey, CommandRecord{CommandID: e.CommandID, Type: v.CommandType, Outcome: OutcomeNoEffect, Fingerprint: v.Fingerprint})
	case *CommandAppliedPayload:
		return applyCommandApplied(n, e, v)
	case *ApprovalDecisionPayload:
		// A decided item no longer awaits approval, so it cannot be decided twice.
		if v.Decision != DecisionAllow && v.Decision != DecisionDeny {
			return &PayloadError{Type: e.Type, Seq: e.Seq, Err: fmt.Errorf("decision %q is not allow or deny", v.Decision)}
		}
		if i := n.Items.index(e.ItemID); i >= 0 && n.Items.At(i).Status == ItemStatusAwaitingApproval {
			it := n.Items.At(i)
			it.Status, it.Approved = ItemStatusStarted, v.Decision == DecisionAllow
			n.Items = n.Items.with(i, it)
		}
	case *ItemStartedPayload, *ItemDeltaPayload, *ItemCompletedPayload, *ItemFailedPayload, *ItemAwaitingApprovalPayload:
		return applyItem(n, e, p)
	}
	return nil
}

// MaxPreRevokedGrants bounds RunState.PreRevokedGrants; a revoke past it,
// before the run exists, is not remembered.
const MaxPreRevokedGrants = 100

// preRevoke remembers grant id (none when empty), which a revoke named
// before the run existed.
func preRevoke(n *RunState, id string) {
	if id == "" || n.Exists() || len(n.PreRevokedGrants) >= MaxPreRevokedGrants || slices.Contains(n.PreRevokedGrants, id) {
		return
	}
	n.PreRevokedGrants = append(n.PreRevokedGrants, id) // fork capped it: this copies
}

// applySandbox records the sandbox the run's tools run in.
func applySandbox(n *RunState, e Envelope, v *SandboxAttachedPayload) error {
	if v.Provider == "" || v.SandboxID == "" {
		return &PayloadError{Type: e.Type, Seq: e.Seq, Err: errors.New("provider and sandboxId are required")}
	}
	n.Sandbox = &SandboxAttachedPayload{Provider: v.Provider, SandboxID: v.SandboxID}
	return nil
}

// applyQueued records the run's place in its key's queue. A paused run
// queues only when nothing awaits a person any more (it was resumed).
func applyQueued(n *RunState, e Envelope, v *RunQueuedPayload) error {
	if v.Position < 1 {
		return &PayloadError{Type: e.Type, Seq: e.Seq, Err: fmt.Errorf("position %d is not 1 or more", v.Position)}
	}
	if n.Status == StatusPaused {
		if a := n.AwaitingApproval(); len(a) > 0 {
			return fmt.Errorf("item %s still awaits approval", a[0].ID)
		}
		n.Requeued = true
	}
	n.QueuePosition = v.Position
	return nil
}

// applyStart checks a start, a resume or a snapshot against the run's past
// (checkRequeued) and records a snapshot.
func applyStart(n *RunState, e Envelope, p any) error {
	if err := checkRequeued(n, e.Type); err != nil {
		return err
	}
	if v, ok := p.(*SnapshotFrozenPayload); ok {
		return applySnapshot(n, e, v)
	}
	return nil
}

// checkRequeued refuses what a queued run's past rules out: a run that
// already ran (requeued) resumes and keeps its snapshot; one that never ran
// starts.
func checkRequeued(n *RunState, t Type) error {
	if n.Status != StatusQueued {
		return nil
	}
	switch {
	case n.Requeued && t != RunResumed:
		return fmt.Errorf("the run was resumed and waits for its sandbox key; %s is for a run that never ran", t)
	case !n.Requeued && t == RunResumed:
		return errors.New("the run never ran; it starts, it does not resume")
	}
	return nil
}

func applySnapshot(n *RunState, e Envelope, v *SnapshotFrozenPayload) error {
	if v.Hash == "" || len(v.Snapshot) == 0 {
		return &PayloadError{Type: e.Type, Seq: e.Seq, Err: errors.New("hash and snapshot are required")}
	}
	if n.SnapshotHash != "" {
		return fmt.Errorf("the run's capability snapshot is already frozen (%s)", n.SnapshotHash)
	}
	var g SnapshotGovernance
	if err := Unmarshal(v.Snapshot, &g); err != nil {
		return &PayloadError{Type: e.Type, Seq: e.Seq, Err: fmt.Errorf("snapshot: %w", err)}
	}
	n.SnapshotHash, n.PauseTTLMs = v.Hash, g.PauseTTLMs
	n.Grants = append(n.Grants, g.Grants...)
	return nil
}

func applyAccepted(n *RunState, e Envelope, v *RunAcceptedPayload) error {
	if v.AgentID == "" || e.TenantID == "" {
		return &PayloadError{Type: e.Type, Seq: e.Seq, Err: errors.New("agentId and envelope tenantId are required")}
	}
	n.TenantID, n.PlatformSessionID = e.TenantID, e.PlatformSessionID
	n.AgentID, n.ParentRunID, n.Input, n.SandboxKey = v.AgentID, v.ParentRunID, v.Input, v.SandboxKey
	n.InheritedGrants, n.Options = v.SessionGrants, v.Options
	n.CreatedAt = e.OccurredAt
	remember(n, v.IdempotencyKey, CommandRecord{CommandID: e.CommandID, Type: "CreateRun", Outcome: OutcomeAccepted, Fingerprint: v.Fingerprint})
	return nil
}

func applyCommandAccepted(n *RunState, e Envelope, v *CommandAcceptedPayload) error {
	if e.CommandID == "" {
		return &PayloadError{Type: e.Type, Seq: e.Seq, Err: errors.New("envelope commandId is required")}
	}
	for _, p := range n.Pending {
		if p.CommandID == e.CommandID {
			return fmt.Errorf("command %s is already pending", e.CommandID)
		}
	}
	n.Pending = append(n.Pending, PendingCommand{CommandID: e.CommandID, Type: v.CommandType,
		IdempotencyKey: v.IdempotencyKey, Command: v.Command, Intent: v.Intent, Actor: v.Actor, Fingerprint: v.Fingerprint})
	remember(n, v.IdempotencyKey, CommandRecord{CommandID: e.CommandID, Type: v.CommandType, Outcome: OutcomeAccepted,
		Fingerprint: v.Fingerprint, Intent: v.Intent})
	return nil
}

func unpend(n *RunState, commandID string) {
	for i, p := range n.Pending {
		if p.CommandID == commandID {
			n.Pending = append(n.Pending[:i:i], n.Pending[i+1:]...)
			return
		}
	}
}

func applyCommandApplied(n *RunState, e Envelope, v *CommandAppliedPayload) error {
	unpend(n, e.CommandID)
	remember(n, v.IdempotencyKey, CommandRecord{CommandID: e.CommandID, Type: v.CommandType, Outcome: OutcomeApplied,
		Fingerprint: v.Fingerprint, Intent: v.Intent, CreatedRunID: v.CreatedRunID})
	if v.CreatedRunID != "" {
		n.NextRunID = v.CreatedRunID
	}
	return nil
}

func remember(n *RunState, key string, rec CommandRecord) {
	if key == "" {
		return
	}
	old, ok := n.Commands[key]
	if ok && old.CommandID != rec.CommandID {
		return // the first command with this key owns it; later ones are duplicates
	}
	n.ownCommands()
	if rec.Fingerprint == "" {
		rec.Fingerprint = old.Fingerprint // an outcome written without it keeps the accepted one's
	}
	if rec.Intent == "" {
		rec.Intent = old.Intent
	}
	n.Commands[key] = rec
}
