package api

import "time"

// SessionStateRecord is what the read models hold of one session, read at
// one point of its log (postgres.SessionState in the API's terms).
type SessionStateRecord struct {
	// OwnerID is the session's owner; "" when it has none on record.
	OwnerID string
	// Head is the first run in session order whose reply has not ended or,
	// when every one ended, the last run; its LastSeq is the last event the
	// state reflects.
	Head SessionRunRecord
	// Open is the first running or paused run (nil when none is), and
	// OpenItemID its assistant_message item in progress ("" when none).
	Open       *SessionRunRecord
	OpenItemID string
	// Pending and Closed are the open and the latest closed interactions,
	// oldest first; Queued and Admitted input ids, oldest first. The *More
	// flags say that a list was cut at its bound.
	Pending, Closed          []InteractionRecord
	PendingMore, ClosedMore  bool
	Queued, Admitted         []string
	QueuedMore, AdmittedMore bool
}

// SessionRunRecord is a run of a session as its state shows it.
type SessionRunRecord struct {
	RunID       string
	Status      string
	PauseReason string
	LastSeq     int64
	CreatedAt   time.Time
}

// InteractionRecord is an approval request (Kind tool_approval) or a
// clarification question (Kind question) of one of a session's runs.
// Status is open, answered, approved, denied, expired or cancelled.
type InteractionRecord struct {
	RunID, ItemID, Kind, Status, ToolName string
	// Input is a question's arguments (JSON text, possibly cut).
	Input                                      string
	ApprovalID, RuleID, Reason, Scope, GrantID string
	OpenedAt                                   time.Time
	ClosedAt                                   *time.Time
}

// sessionState is the body of GET /v1/sessions/{platformSessionId}/state.
type sessionState struct {
	PlatformSessionID   string        `json:"platformSessionId"`
	Status              sessionStatus `json:"status" doc:"The session's status: that of its head run (the first whose reply has not ended, else the last), as the stream's data-status part shows it."`
	OpenReply           *openReply    `json:"openReply,omitempty" doc:"The reply in progress: the first running or paused run of the session; absent when none is."`
	PendingInteractions []interaction `json:"pendingInteractions" nullable:"false" doc:"Approval requests and clarification questions waiting for an answer, oldest first."`
	ClosedInteractions  []interaction `json:"closedInteractions" nullable:"false" doc:"The latest closed interactions, oldest first, with how they closed."`
	QueuedInputIDs      []string      `json:"queuedInputIds" nullable:"false" doc:"Inputs accepted and not applied yet (a steer waiting for the run's next safe point), oldest first."`
	AdmittedInputIDs    []string      `json:"admittedInputIds" nullable:"false" doc:"The latest inputs applied (a run's input, a steer, an answer, a follow-up), oldest first: the runtime answers them even after a restart."`
	Truncated           []string      `json:"truncated" nullable:"false" enum:"pendingInteractions,closedInteractions,queuedInputIds,admittedInputIds" doc:"The lists that were cut at their bound."`
	Cursor              string        `json:"cursor" doc:"The session stream's chunk id this state reflects (<runId>:<seq>): send it as Last-Event-ID to stream what follows."`
}

// sessionStatus is a session's status, the data of the stream's data-status
// part (uistream.Status).
type sessionStatus struct {
	Status string `json:"status" enum:"working,waiting,idle"`
	RunID  string `json:"runId"`
	Reason string `json:"reason,omitempty" doc:"Why it waits: queued (for its sandbox key) or the run's pauseReason, e.g. awaiting_approval."`
}

type openReply struct {
	RunID       string `json:"runId"`
	Status      string `json:"status" enum:"running,paused"`
	PauseReason string `json:"pauseReason,omitempty"`
	ItemID      string `json:"itemId,omitempty" doc:"The assistant_message item being written, if any."`
}

// interaction is an approval request or a clarification question; its ids
// are those of the stream's data-interaction part.
type interaction struct {
	InteractionID string `json:"interactionId" doc:"The item's id, as in the data-interaction part; answer a question with AppendUserInput intent clarification and this interactionId."`
	ItemID        string `json:"itemId" doc:"Decide an approval with POST /v1/runs/{runId}/approval-decisions naming this itemId."`
	RunID         string `json:"runId"`
	Kind          string `json:"kind" enum:"tool_approval,question"`
	Status        string `json:"status" enum:"open,answered,approved,denied,expired,cancelled" doc:"open, or how it closed: answered (a question), approved or denied (an approval), expired (nobody answered before the run's pause expired), cancelled (its item or run ended otherwise first)."`
	ToolName      string `json:"toolName,omitempty"`
	Question      string `json:"question,omitempty"`
	ApprovalID    string `json:"approvalId,omitempty" doc:"The approval request's id (apr_…)."`
	RuleID        string `json:"ruleId,omitempty" doc:"The policy rule that asks."`
	Reason        string `json:"reason,omitempty" doc:"Why the rule asks."`
	Scope         string `json:"scope,omitempty" doc:"A decided approval's scope: item, run or platform_session."`
	GrantID       string `json:"grantId,omitempty" doc:"Set when a grant given for another call decided it."`
	OpenedAt      int64  `json:"openedAt" doc:"Unix milliseconds."`
	ClosedAt      *int64 `json:"closedAt,omitempty" doc:"Unix milliseconds; set once closed."`
}
