package commands

import (
	"encoding/json"
	"fmt"

	"github.com/xbot-runtime/xbot/events"
)

// Type names a command.
type Type string

// The command types.
const (
	CreateRun              Type = "CreateRun"
	AppendUserInput        Type = "AppendUserInput"
	CancelRun              Type = "CancelRun"
	SubmitApprovalDecision Type = "SubmitApprovalDecision"
	RequestCompaction      Type = "RequestCompaction"
	RevokePermissionGrant  Type = "RevokePermissionGrant"
)

// Types lists every command type.
func Types() []Type {
	return []Type{CreateRun, AppendUserInput, CancelRun, SubmitApprovalDecision, RequestCompaction, RevokePermissionGrant}
}

// Envelope is one command as it travels on xbot.commands.v1.
type Envelope struct {
	CommandID         string          `json:"commandId"`
	IdempotencyKey    string          `json:"idempotencyKey"`
	RunID             string          `json:"runId"`
	PlatformSessionID string          `json:"platformSessionId,omitempty"`
	Type              Type            `json:"type"`
	Actor             events.Actor    `json:"actor"`
	TenantID          string          `json:"tenantId"`
	IssuedAt          int64           `json:"issuedAt"`
	SchemaVersion     string          `json:"schemaVersion"`
	Payload           json.RawMessage `json:"payload"`
}

// CreateRunPayload asks for a new run.
type CreateRunPayload struct {
	AgentID     string            `json:"agentId"`
	Input       events.UserInput  `json:"input"`
	SandboxKey  events.SandboxKey `json:"sandboxKey"`
	ParentRunID string            `json:"parentRunId,omitempty"`
	Metadata    map[string]string `json:"metadata,omitempty"`
	// Options are the per-run options the caller asked for, already
	// checked against the agent profile and the caller's scopes by the API;
	// the executor freezes the effective options into the snapshot. Nil:
	// the profile's defaults.
	Options *events.RunOptions `json:"options,omitempty"`
	// InputID is the input id (the Idempotency-Key) of the message a
	// follow-up or a session message created the run for, which the run's
	// stream reports in input_ids. The executor sets it; empty for a create
	// of the HTTP API, whose own key is the input id.
	InputID string `json:"inputId,omitempty"`
	// InputIDs are the input ids of the messages the run answers when it
	// answers several (an interrupt's next run, from the messages that were
	// queued on the interrupted one), in the order they were sent; InputID
	// is then empty. The executor sets them.
	InputIDs []string `json:"inputIds,omitempty"`
	// SessionGrants are the platform_session grants in force for the run's
	// session, which its capability snapshot inherits. The runtime sets them
	// (the API from the read model, the executor for a follow-up); clients
	// of the HTTP API cannot.
	SessionGrants []events.PermissionGrant `json:"sessionGrants,omitempty"`
	// History says where the session's earlier runs are on the events topic,
	// so that the run's engine reads their conversation from those ranges
	// instead of searching partitions. The executor sets it on a follow-up's
	// create; clients of the HTTP API cannot. Nil when not known (a create
	// that names parentRunId itself): the engine then searches the parent's
	// partition.
	History *SessionHistory `json:"history,omitempty"`
}

// SessionHistory locates a session's earlier runs, oldest first.
type SessionHistory struct {
	Runs []HistoryRef `json:"runs"`
}

// HistoryRef locates one run's events: every event of run RunID that a
// follow-up reads is on partition Partition of the events topic at an offset
// in [From, To).
type HistoryRef struct {
	RunID     string `json:"runId"`
	Partition int32  `json:"partition"`
	From      int64  `json:"from"`
	To        int64  `json:"to"`
}

// MaxHistoryRuns bounds how many earlier runs of a session a follow-up's
// context reads: the newest MaxHistoryRuns.
const MaxHistoryRuns = 32

// Intents of AppendUserInput.
const (
	IntentSteer         = "steer"
	IntentFollowUp      = "follow_up"
	IntentClarification = "clarification"
	// IntentAuto is a session message: the executor routes it by the state
	// of the session's head run (AdmitSessionMessage, docs/sessions.md).
	IntentAuto = "auto"
	// IntentQueued is what a session message becomes on a run paused for an
	// approval: kept pending, applied as a steer once the run resumes. It
	// names an outcome, never a request.
	IntentQueued = "queued"
)

// AppendUserInputPayload adds user input to a run; the intent decides how.
type AppendUserInputPayload struct {
	Intent        string `json:"intent"`
	Content       string `json:"content"`
	InteractionID string `json:"interactionId,omitempty"`
	// AgentID, SandboxKey and Options are a session message's (intent auto),
	// used only when it creates the session's first run.
	AgentID    string             `json:"agentId,omitempty"`
	SandboxKey *events.SandboxKey `json:"sandboxKey,omitempty"`
	Options    *events.RunOptions `json:"options,omitempty"`
	// Behind is set by the executor on a session message it sent again
	// behind the CreateRun of run Behind, which the session's head named
	// before that create was admitted. Not part of the request (the
	// fingerprint leaves it out); clients cannot set it.
	Behind string `json:"behind,omitempty"`
}

// CancelRunPayload asks to cancel a run.
type CancelRunPayload struct {
	Reason string `json:"reason,omitempty"`
	// Interrupt makes it a session's interrupt: the executor cancels the
	// session's head run (the current reply) and keeps the session
	// (AdmitInterrupt). CancelQueued then says what becomes of the session
	// messages still pending on it: dropped (true) or the session's next
	// run (false).
	Interrupt    bool `json:"interrupt,omitempty"`
	CancelQueued bool `json:"cancelQueued,omitempty"`
	// Behind is an interrupt's, set by the executor as on a session message
	// (AppendUserInputPayload.Behind).
	Behind string `json:"behind,omitempty"`
}

// SubmitApprovalDecisionPayload decides one pending approval.
type SubmitApprovalDecisionPayload struct {
	ItemID   string `json:"itemId"`
	Decision string `json:"decision"`
	Scope    string `json:"scope"`
	Reason   string `json:"reason,omitempty"`
	// TTLSeconds bounds how long the grant an allow with scope
	// platform_session gives stays in force (1 to MaxGrantTTLSeconds);
	// 0: until revoked.
	TTLSeconds int64 `json:"ttlSeconds,omitempty"`
}

// RequestCompactionPayload asks for a context compaction.
type RequestCompactionPayload struct {
	Reason string `json:"reason,omitempty"`
}

// NewPayload returns a pointer to a zero payload for t.
func NewPayload(t Type) (any, error) {
	switch t {
	case CreateRun:
		return new(CreateRunPayload), nil
	case AppendUserInput:
		return new(AppendUserInputPayload), nil
	case CancelRun:
		return new(CancelRunPayload), nil
	case SubmitApprovalDecision:
		return new(SubmitApprovalDecisionPayload), nil
	case RequestCompaction:
		return new(RequestCompactionPayload), nil
	case RevokePermissionGrant:
		return new(RevokePermissionGrantPayload), nil
	}
	return nil, fmt.Errorf("unknown command type %q", t)
}

// DecodePayload unmarshals the payload into its type.
func (c Envelope) DecodePayload() (any, error) {
	p, err := NewPayload(c.Type)
	if err != nil {
		return nil, err
	}
	if len(c.Payload) == 0 {
		return p, nil
	}
	if err := events.Unmarshal(c.Payload, p); err != nil {
		return nil, fmt.Errorf("decode %s payload: %w", c.Type, err)
	}
	return p, nil
}

// Decode parses and validates a command envelope from the wire.
func Decode(data []byte) (Envelope, any, error) {
	var c Envelope
	if err := events.Unmarshal(data, &c); err != nil {
		return Envelope{}, nil, fmt.Errorf("decode command envelope: %w", err)
	}
	p, err := c.Validate()
	if err != nil {
		return c, nil, err
	}
	return c, p, nil
}
