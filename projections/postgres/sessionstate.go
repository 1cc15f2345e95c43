package postgres

import "time"

// SessionState is what the read models hold of one platform session at one
// moment: every field is read in one snapshot of the database, so they
// agree with each other and with Head.LastSeq, the last event of the head
// run they reflect.
type SessionState struct {
	// OwnerID is the session's owner (the actor of its first create); ""
	// when it has no claim.
	OwnerID string
	// Head is the first run (in session order) whose reply has not ended
	// or, when every reply ended, the last run: where a session stream
	// without a position starts.
	Head SessionRun
	// Open is the first run in session order that is running or paused;
	// nil when none is.
	Open *SessionRun
	// OpenItemID is Open's assistant_message item that has started and not
	// ended ("" when none).
	OpenItemID string
	// Pending are the interactions waiting for an answer, oldest first;
	// Closed the latest closed ones, oldest first. Each holds at most
	// MaxStateInteractions; the *More flags say that more exist.
	Pending, Closed         []SessionInteraction
	PendingMore, ClosedMore bool
	// Queued are the ids of the session's inputs accepted and not applied
	// yet, oldest first; Admitted the latest applied ones, oldest first.
	// Each holds at most MaxStateInputs; the *More flags say that more
	// exist.
	Queued, Admitted         []string
	QueuedMore, AdmittedMore bool
}

// SessionRun is a run of a session as SessionState shows it.
type SessionRun struct {
	RunID       string
	Status      string
	PauseReason string
	LastSeq     int64
	CreatedAt   time.Time
}

// SessionInteraction is an approval request or a clarification question
// of one of the session's runs. The interaction's id is its item's.
type SessionInteraction struct {
	RunID  string
	ItemID string
	// Kind is InteractionToolApproval or InteractionQuestion.
	Kind string
	// Status is InteractionOpen, or how it closed: InteractionAnswered (a
	// question), InteractionApproved or InteractionDenied (an approval),
	// InteractionExpired or InteractionCancelled (its item or run ended
	// otherwise first).
	Status   string
	ToolName string
	// Input is the item's input as the items read model keeps it (a
	// question's arguments; "" for approvals).
	Input string
	// ApprovalID, RuleID and Reason describe an approval request.
	ApprovalID, RuleID, Reason string
	// Scope is an approval decision's scope; GrantID the grant that
	// covered it, when a grant given for another call did.
	Scope, GrantID string
	OpenedAt       time.Time
	ClosedAt       *time.Time
}

// Interaction kinds and statuses of SessionInteraction.
const (
	InteractionToolApproval = "tool_approval"
	InteractionQuestion     = "question"

	InteractionOpen      = "open"
	InteractionAnswered  = "answered"
	InteractionApproved  = "approved"
	InteractionDenied    = "denied"
	InteractionExpired   = "expired"
	InteractionCancelled = "cancelled"
)

// The bounds of SessionState's lists: one response stays small however long
// the session is. The interactions a reply waits on at once and the inputs
// queued on it are far fewer in practice.
const (
	MaxStateInteractions = 100
	MaxStateInputs       = 200
)
