package agentruntime

import (
	"encoding/json"
	"errors"

	"github.com/xbot-runtime/xbot/events"
)

// Event is one event of the runtime client contract's closed set:
// InputAdmitted, ResponseStarted, ResponseOutput, InteractionOpened,
// InteractionClosed, ResponseEnded, StatusChanged and RuntimeDiagnostic —
// no other type implements it. Every event carries the cursor to continue
// after it.
type Event interface {
	// Cursor is the position right after this event: Events(ctx, &cursor)
	// yields exactly the events that followed it.
	Cursor() Cursor
	// placed returns the event with its cursor set.
	placed(Cursor) Event
}

// At is the cursor every event carries.
type At struct {
	// At is the position right after the event.
	At Cursor `json:"at"`
}

// Cursor returns the position right after the event.
func (a At) Cursor() Cursor { return a.At }

// InputAdmitted says the runtime has applied the input (its Idempotency-Key
// is InputID) to a reply, so it answers it even if the runtime restarts:
// reported when the input first appears among a reply's input ids.
type InputAdmitted struct {
	At
	InputID string `json:"inputId"`
}

// ResponseStarted says a reply began: ResponseID is its run id (stable for
// its whole life, for any reader), Origin "input" (every xbot reply answers
// an input), InputIDs the inputs it answers so far.
type ResponseStarted struct {
	At
	ResponseID string   `json:"responseId"`
	Origin     string   `json:"origin"`
	InputIDs   []string `json:"inputIds"`
}

// ResponseOutput is one browser part of a reply: Frame is an AI SDK UI
// message chunk exactly as the server sent it (start, text-delta,
// tool-input-available, tool-approval-request, data-interaction, finish, …).
// ResponseID is empty only for a part that belongs to no reply.
type ResponseOutput struct {
	At
	ResponseID string          `json:"responseId"`
	Frame      json.RawMessage `json:"frame"`
}

// InteractionOpened says a reply paused for the user: Contract says what
// is asked and how it may be answered (Client.Answer with InteractionID).
// It comes before the parts that show the question.
type InteractionOpened struct {
	At
	ResponseID    string   `json:"responseId"`
	InteractionID string   `json:"interactionId"`
	Contract      Contract `json:"contract"`
}

// The reasons an interaction closes.
const (
	ClosedAnswered  = "answered"
	ClosedWithdrawn = "withdrawn"
	ClosedExpired   = "expired"
)

// InteractionClosed says the runtime stopped waiting on an interaction:
// Reason is answered, withdrawn (its call or its reply ended first) or
// expired (nobody answered before the pause expired).
type InteractionClosed struct {
	At
	InteractionID string `json:"interactionId"`
	Reason        string `json:"reason"`
}

// The outcomes of a reply.
const (
	OutcomeCompleted = "completed"
	OutcomeFailed    = "failed"
	OutcomeCancelled = "cancelled"
)

// ResponseEnded says a reply ended. Outcome is completed, failed or
// cancelled; NativeReason is xbot's own word for how the run ended
// (completed, failed, cancelled, expired); Error is set for a failed reply.
type ResponseEnded struct {
	At
	ResponseID   string         `json:"responseId"`
	Outcome      string         `json:"outcome"`
	NativeReason string         `json:"nativeReason"`
	Usage        *events.Usage  `json:"usage,omitempty"`
	Error        *ResponseError `json:"error,omitempty"`
}

// ResponseError is why a reply failed: the run's errorCode (model_error,
// budget_exhausted, runtime_lost, sandbox_error, internal, …) and message.
type ResponseError struct {
	Code    string `json:"code"`
	Message string `json:"message,omitempty"`
}

// The statuses of the runtime.
const (
	StatusWorking = "working"
	StatusWaiting = "waiting"
	StatusIdle    = "idle"
)

// StatusChanged says what the conversation's runtime is doing now:
// working, waiting (Reason "queued" for its sandbox, or the pause's reason,
// e.g. awaiting_approval) or idle. RunID is the run the status is of.
type StatusChanged struct {
	At
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
	RunID  string `json:"runId,omitempty"`
}

// RuntimeDiagnostic is evidence for operators that is not shown in a
// browser: a data-status part that does not decode, kept as the server
// sent it.
type RuntimeDiagnostic struct {
	At
	EventType string          `json:"eventType"`
	Raw       json.RawMessage `json:"raw"`
}

// Contract is what an interaction asks and how it may be answered, in
// xbot's own terms. Kind "tool_approval": allow or deny the call ToolName
// with Input (the policy rule RuleID asks, for Reason; ApprovalID is the
// request's id), answered with Response.Decision and Response.Scope.
// Kind "question": Question, answered with Response.Text.
type Contract struct {
	Kind       string          `json:"kind"`
	ToolName   string          `json:"toolName,omitempty"`
	Input      json.RawMessage `json:"input,omitempty"`
	Question   string          `json:"question,omitempty"`
	ApprovalID string          `json:"approvalId,omitempty"`
	RuleID     string          `json:"ruleId,omitempty"`
	Reason     string          `json:"reason,omitempty"`
	// Decisions and Scopes are the answers a tool approval takes.
	Decisions []string `json:"decisions,omitempty"`
	Scopes    []string `json:"scopes,omitempty"`
}

// The answers of a tool approval.
var (
	approvalDecisions = []string{"allow", "deny"}
	approvalScopes    = []string{"item", "run", "platform_session"}
)

func (e InputAdmitted) placed(c Cursor) Event     { e.At.At = c; return e }
func (e ResponseStarted) placed(c Cursor) Event   { e.At.At = c; return e }
func (e ResponseOutput) placed(c Cursor) Event    { e.At.At = c; return e }
func (e InteractionOpened) placed(c Cursor) Event { e.At.At = c; return e }
func (e InteractionClosed) placed(c Cursor) Event { e.At.At = c; return e }
func (e ResponseEnded) placed(c Cursor) Event     { e.At.At = c; return e }
func (e StatusChanged) placed(c Cursor) Event     { e.At.At = c; return e }
func (e RuntimeDiagnostic) placed(c Cursor) Event { e.At.At = c; return e }

// Name is the contract's name of the event's type (InputAdmitted, …).
func Name(e Event) string {
	switch e.(type) {
	case InputAdmitted:
		return "InputAdmitted"
	case ResponseStarted:
		return "ResponseStarted"
	case ResponseOutput:
		return "ResponseOutput"
	case InteractionOpened:
		return "InteractionOpened"
	case InteractionClosed:
		return "InteractionClosed"
	case ResponseEnded:
		return "ResponseEnded"
	case StatusChanged:
		return "StatusChanged"
	case RuntimeDiagnostic:
		return "RuntimeDiagnostic"
	}
	return ""
}

// Encode is the event as one JSON object: its fields and "type", its Name.
func Encode(e Event) (json.RawMessage, error) {
	if e == nil {
		return nil, errors.New("agentruntime: encode a nil event")
	}
	raw, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, err
	}
	fields["type"], _ = json.Marshal(Name(e))
	return json.Marshal(fields)
}
