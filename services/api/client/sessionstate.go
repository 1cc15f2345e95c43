package client

import (
	"context"
	"net/http"
	"net/url"
)

// SessionState is GET /v1/sessions/{platformSessionId}/state: the session's
// state as the read models hold it, at the session stream's chunk Cursor.
type SessionState struct {
	PlatformSessionID   string        `json:"platformSessionId"`
	Status              SessionStatus `json:"status"`
	OpenReply           *OpenReply    `json:"openReply,omitempty"`
	PendingInteractions []Interaction `json:"pendingInteractions"`
	ClosedInteractions  []Interaction `json:"closedInteractions"`
	QueuedInputIDs      []string      `json:"queuedInputIds"`
	AdmittedInputIDs    []string      `json:"admittedInputIds"`
	// Truncated names the lists cut at their bound.
	Truncated []string `json:"truncated"`
	// Cursor is the session stream's chunk id the state reflects: stream
	// with Last-Event-ID: Cursor to continue right after it.
	Cursor string `json:"cursor"`
}

// SessionStatus is a session's status, the data of the stream's data-status
// part: working, waiting (Reason: queued or the pauseReason) or idle.
type SessionStatus struct {
	Status string `json:"status"`
	RunID  string `json:"runId"`
	Reason string `json:"reason,omitempty"`
}

// OpenReply is the session's reply in progress: a running or paused run and
// the assistant_message item it is writing, if any.
type OpenReply struct {
	RunID       string `json:"runId"`
	Status      string `json:"status"`
	PauseReason string `json:"pauseReason,omitempty"`
	ItemID      string `json:"itemId,omitempty"`
}

// Interaction is an approval request (Kind tool_approval) or a
// clarification question (Kind question). Status is open, answered,
// approved, denied, expired or cancelled.
type Interaction struct {
	InteractionID string `json:"interactionId"`
	ItemID        string `json:"itemId"`
	RunID         string `json:"runId"`
	Kind          string `json:"kind"`
	Status        string `json:"status"`
	ToolName      string `json:"toolName,omitempty"`
	Question      string `json:"question,omitempty"`
	ApprovalID    string `json:"approvalId,omitempty"`
	RuleID        string `json:"ruleId,omitempty"`
	Reason        string `json:"reason,omitempty"`
	Scope         string `json:"scope,omitempty"`
	GrantID       string `json:"grantId,omitempty"`
	OpenedAt      int64  `json:"openedAt"`
	ClosedAt      *int64 `json:"closedAt,omitempty"`
}

// SessionState reads the state of the platform session sessionID (GET
// /v1/sessions/{platformSessionId}/state): a session the tenant has no run
// in is a 404 *Problem.
func (c *Client) SessionState(ctx context.Context, sessionID string) (SessionState, error) {
	var out SessionState
	err := c.call(ctx, http.MethodGet, "/v1/sessions/"+url.PathEscape(sessionID)+"/state", nil, &out)
	return out, err
}
