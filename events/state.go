package events

import "encoding/json"

// CommandRecord is what a run remembers of a command, by idempotency key, so
// that a repeated key returns the original outcome.
type CommandRecord struct {
	CommandID string `json:"commandId"`
	Type      string `json:"type"`
	Outcome   string `json:"outcome"`
	Code      string `json:"code,omitempty"`
}

// PendingCommand is a command accepted by admission and not yet applied at a
// safe point. The executor rebuilds this list from the log after a crash.
type PendingCommand struct {
	CommandID      string          `json:"commandId"`
	Type           string          `json:"type"`
	IdempotencyKey string          `json:"idempotencyKey"`
	Command        json.RawMessage `json:"command,omitempty"`
}

// ItemRef is the state of one item of a run.
type ItemRef struct {
	ID     string   `json:"id"`
	Type   ItemType `json:"type"`
	Status string   `json:"status"` // started | awaiting_approval | completed | truncated | failed
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
	Items             []ItemRef                `json:"items,omitempty"`
}

// Exists reports whether the run has been accepted.
func (s RunState) Exists() bool { return s.Status != "" && s.Status != StatusCreated }

// CurrentStatus returns the state, reporting created for a run with no events.
func (s RunState) CurrentStatus() Status { return s.Status.orCreated() }

// Item returns the item with the given id.
func (s RunState) Item(id string) (ItemRef, bool) {
	for _, it := range s.Items {
		if it.ID == id {
			return it, true
		}
	}
	return ItemRef{}, false
}

// OpenItems returns the items that started and have not been closed.
func (s RunState) OpenItems() []ItemRef {
	var out []ItemRef
	for _, it := range s.Items {
		if it.Status == ItemStatusStarted || it.Status == ItemStatusAwaitingApproval {
			out = append(out, it)
		}
	}
	return out
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
	c.Items = append([]ItemRef(nil), s.Items...)
	return &c
}
