package events

import (
	"encoding/json"
	"maps"
)

// CommandRecord is what a run remembers of a command, by idempotency key, so
// that a repeated key returns the original outcome.
type CommandRecord struct {
	CommandID string  `json:"commandId"`
	Type      string  `json:"type"`
	Outcome   Outcome `json:"outcome"`
	Code      Code    `json:"code,omitempty"`
	// Fingerprint identifies what the command asked for (see
	// commands.Fingerprint); empty in logs written before outcomes kept it.
	Fingerprint string `json:"fingerprint,omitempty"`
	// Intent is what a session message became, and CreatedRunID the run it
	// (a follow-up) created, so that a retry is answered with both.
	Intent       string `json:"intent,omitempty"`
	CreatedRunID string `json:"createdRunId,omitempty"`
}

// PendingCommand is a command accepted by admission and not yet applied at a
// safe point. The executor rebuilds this list from the log after a crash.
type PendingCommand struct {
	CommandID      string          `json:"commandId"`
	Type           string          `json:"type"`
	IdempotencyKey string          `json:"idempotencyKey"`
	Command        json.RawMessage `json:"command,omitempty"`
	// Intent is what a session message became (from its
	// runtime.command.accepted); empty for every other command.
	Intent string `json:"intent,omitempty"`
	// Actor is who sent the command (from its runtime.command.accepted);
	// the outcome that closes it names the same actor.
	Actor *Actor `json:"actor,omitempty"`
	// Fingerprint is the command's (from its runtime.command.accepted); the
	// outcome that closes it keeps it.
	Fingerprint string `json:"fingerprint,omitempty"`
}

// ItemRef is the state of one item of a run.
type ItemRef struct {
	ID     string   `json:"id"`
	Type   ItemType `json:"type"`
	Status string   `json:"status"` // started | awaiting_approval | completed | truncated | failed
	// ToolName and RuleID are set when the item awaited approval: the tool
	// and the policy rule a grant for it covers.
	ToolName string `json:"toolName,omitempty"`
	RuleID   string `json:"ruleId,omitempty"`
	// Approved says a decision (or a grant) allowed the item to run.
	Approved bool `json:"approved,omitempty"`
}

// Item statuses besides the completion statuses.
const (
	ItemStatusStarted          = "started"
	ItemStatusAwaitingApproval = "awaiting_approval"
	ItemStatusFailed           = "failed"
)

// RunState is the fold of a run's events. The zero value is a run that does
// not exist yet (state created).
type RunState struct {
	RunID             string                   `json:"runId"`
	TenantID          string                   `json:"tenantId"`
	PlatformSessionID string                   `json:"platformSessionId,omitempty"`
	AgentID           string                   `json:"agentId,omitempty"`
	ParentRunID       string                   `json:"parentRunId,omitempty"`
	Input             UserInput                `json:"input"`
	SandboxKey        SandboxKey               `json:"sandboxKey"`
	Status            Status                   `json:"status"`
	PauseReason       PauseReason              `json:"pauseReason,omitempty"`
	ErrorCode         string                   `json:"errorCode,omitempty"`
	CancelReason      string                   `json:"cancelReason,omitempty"`
	LastSeq           int64                    `json:"lastSeq"`
	CreatedAt         int64                    `json:"createdAt,omitempty"`
	UpdatedAt         int64                    `json:"updatedAt,omitempty"`
	Commands          map[string]CommandRecord `json:"commands,omitempty"`
	Pending           []PendingCommand         `json:"pending,omitempty"`
	Items             ItemList                 `json:"items,omitzero"`
	// InheritedGrants are the session grants given with the run's creation;
	// the capability snapshot freezes them.
	InheritedGrants []PermissionGrant `json:"inheritedGrants,omitempty"`
	// Options are the per-run options asked for at the run's creation (nil:
	// the profile's defaults); the capability snapshot freezes the
	// effective ones.
	Options *RunOptions `json:"options,omitempty"`
	// SnapshotHash is the hash of the run's capability snapshot.
	SnapshotHash string `json:"snapshotHash,omitempty"`
	// PauseTTLMs is how long the run may stay paused (0: no limit), from its snapshot.
	PauseTTLMs int64 `json:"pauseTtlMs,omitempty"`
	// PausedAt is when the run last paused (ms).
	PausedAt int64 `json:"pausedAt,omitempty"`
	// Grants are the permission grants in force: inherited through the
	// snapshot, then applied during the run.
	Grants []PermissionGrant `json:"grants,omitempty"`
	// RevokedGrants are the grants revoked while the run held them
	// (runtime.permission_grant.revoked), kept so that a call they covered
	// says why it asks again.
	RevokedGrants []PermissionGrant `json:"revokedGrants,omitempty"`
	// PreRevokedGrants are the grants revokes named before the run existed
	// (CommandRejectedPayload.GrantID), in the order they came, at most
	// MaxPreRevokedGrants: its create does not hand them on.
	PreRevokedGrants []string `json:"preRevokedGrants,omitempty"`
	// NextRunID is the session's run that a follow-up on this finished run
	// created (the latest one, from runtime.command.applied's createdRunId):
	// a session message sent to this run goes on to it.
	NextRunID string `json:"nextRunId,omitempty"`
	// Requeued says the queued run was resumed from a pause while another
	// run held its sandbox key: it resumes (runtime.run.resumed), not
	// starts, when it gets the key.
	Requeued bool `json:"requeued,omitempty"`
	// QueuePosition is the run's last recorded place in its sandbox key's
	// queue (runtime.run.queued; 0 when it is not queued or never said).
	QueuePosition int `json:"queuePosition,omitempty"`
	// Sandbox is the sandbox the run's tools run in, when its provider
	// keeps it under an id (runtime.sandbox.attached); nil otherwise.
	Sandbox *SandboxAttachedPayload `json:"sandbox,omitempty"`
}

// PauseDeadline is when a paused run expires (ms); ok is false when the run
// is not paused or has no pause TTL.
func (s RunState) PauseDeadline() (deadline int64, ok bool) {
	if s.Status != StatusPaused || s.PauseTTLMs <= 0 {
		return 0, false
	}
	return s.PausedAt + s.PauseTTLMs, true
}

// Granted returns the grant that lets a call of tool that rule ruleID sends
// for approval run without asking at time at (Unix ms): one in force and not
// expired.
func (s RunState) Granted(tool, ruleID string, at int64) (PermissionGrant, bool) {
	for _, g := range s.Grants {
		if g.Covers(tool, ruleID) && g.ActiveAt(at) {
			return g, true
		}
	}
	return PermissionGrant{}, false
}

// SessionGrants returns the platform_session grants in force at time at
// (Unix ms), which a later run of the same session inherits: neither
// revoked nor expired.
func (s RunState) SessionGrants(at int64) []PermissionGrant {
	var out []PermissionGrant
	for _, g := range s.Grants {
		if g.Scope == ScopePlatformSession && g.ActiveAt(at) {
			out = append(out, g)
		}
	}
	return out
}

// AwaitingApproval returns the items waiting for a decision.
func (s RunState) AwaitingApproval() []ItemRef {
	var out []ItemRef
	for it := range s.Items.All() {
		if it.Status == ItemStatusAwaitingApproval {
			out = append(out, it)
		}
	}
	return out
}

// Exists reports whether the run has been accepted.
func (s RunState) Exists() bool { return s.Status != "" && s.Status != StatusCreated }

// CurrentStatus returns the state, reporting created for a run with no events.
func (s RunState) CurrentStatus() Status { return s.Status.orCreated() }

// Item returns the item with the given id.
func (s RunState) Item(id string) (ItemRef, bool) {
	if i := s.Items.index(id); i >= 0 {
		return s.Items.At(i), true
	}
	return ItemRef{}, false
}

// OpenItems returns the items that started and have not been closed.
func (s RunState) OpenItems() []ItemRef {
	var out []ItemRef
	for it := range s.Items.All() {
		if it.Status == ItemStatusStarted || it.Status == ItemStatusAwaitingApproval {
			out = append(out, it)
		}
	}
	return out
}

// fork returns a copy of s for Fold to change without copying what the
// event leaves alone, so that folding one event does not cost the length of
// the run. Its slices are s's with no room to grow, so an append or a
// removal (append(x[:i:i], …)) makes a new array; Fold's writes in place
// copy first: remember the Commands map (ownCommands). Items is persistent
// (ItemList) and needs nothing.
func (s *RunState) fork() *RunState {
	c := *s
	c.Pending = c.Pending[:len(c.Pending):len(c.Pending)]
	c.Grants = c.Grants[:len(c.Grants):len(c.Grants)]
	c.RevokedGrants = c.RevokedGrants[:len(c.RevokedGrants):len(c.RevokedGrants)]
	c.InheritedGrants = c.InheritedGrants[:len(c.InheritedGrants):len(c.InheritedGrants)]
	c.PreRevokedGrants = c.PreRevokedGrants[:len(c.PreRevokedGrants):len(c.PreRevokedGrants)]
	return &c
}

// ownCommands gives a fork its own Commands map before a write.
func (s *RunState) ownCommands() {
	if s.Commands == nil {
		s.Commands = map[string]CommandRecord{}
		return
	}
	s.Commands = maps.Clone(s.Commands)
}

// Clone returns a deep copy, so a fold can be tried without touching s.
func (s *RunState) Clone() *RunState {
	c := *s
	if s.Commands != nil {
		c.Commands = make(map[string]CommandRecord, len(s.Commands))
		for k, v := range s.Commands {
			c.Commands[k] = v
		}
	}
	c.Pending = append([]PendingCommand(nil), s.Pending...)
	c.Grants = append([]PermissionGrant(nil), s.Grants...)
	c.RevokedGrants = append([]PermissionGrant(nil), s.RevokedGrants...)
	c.PreRevokedGrants = append([]string(nil), s.PreRevokedGrants...)
	return &c
}
