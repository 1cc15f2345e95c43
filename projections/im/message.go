package im

import (
	"strconv"

	"github.com/xbot-runtime/xbot/events"
)

// Message is one chat message of the IM view, as published on
// xbot.im.outbox.v1 keyed by ConversationID (schema: schemas/v1/im.message.json).
type Message struct {
	SchemaVersion string `json:"schemaVersion"`
	// ID is MessageID(RunID, Seq): the same event always yields the same id,
	// so an IM worker dedupes redelivered and republished messages by it.
	ID string `json:"id"`
	// ConversationID is the run's platformSessionId, or its runId when it has none.
	ConversationID string `json:"conversationId"`
	TenantID       string `json:"tenantId"`
	RunID          string `json:"runId"`
	// Seq is the seq of the event the message comes from.
	Seq  int64 `json:"seq"`
	Kind Kind  `json:"kind"`
	// Text is what to show, plain text; never empty.
	Text string `json:"text"`
	// ItemID is the item the message is about (assistant_message,
	// clarification_request, awaiting_approval, an approval decision).
	ItemID string `json:"itemId,omitempty"`
	// Truncated says an assistant_message was cut short (the run was
	// cancelled while the model was answering).
	Truncated bool `json:"truncated,omitempty"`
	// Request details an awaiting_approval message: what waits and why.
	Request *ApprovalRequest `json:"request,omitempty"`
	// Actions are the buttons of an awaiting_approval message.
	Actions []Action `json:"actions,omitempty"`
	// Status says what happened, on kind status only.
	Status *Status `json:"status,omitempty"`
	// CreatedAt is the event's occurredAt (Unix ms).
	CreatedAt int64 `json:"createdAt"`
}

// Kind says what a message is.
type Kind string

// Message kinds. The names are the protocol's names for the things they show.
const (
	// KindAssistantMessage is a completed reply of the agent.
	KindAssistantMessage Kind = "assistant_message"
	// KindClarificationRequest is a question the run waits on; answer it with
	// AppendUserInput{intent: clarification, interactionId: ItemID}.
	KindClarificationRequest Kind = "clarification_request"
	// KindAwaitingApproval asks for a decision on an item; its Actions carry
	// the SubmitApprovalDecision each button sends.
	KindAwaitingApproval Kind = "awaiting_approval"
	// KindStatus is a notice about the run (failed, cancelled, expired,
	// paused, an approval decided, a follow-up started).
	KindStatus Kind = "status"
	// KindToolResult is a tool call's result as the model receives it,
	// shortened (ToolResultTextMax).
	KindToolResult Kind = "tool_result"
)

// Kinds lists every message kind.
func Kinds() []Kind {
	return []Kind{KindAssistantMessage, KindClarificationRequest, KindAwaitingApproval, KindStatus, KindToolResult}
}

// Action is a button. It maps onto an IM channel's action segment
// ({type: action, data: {id, payload}}): the channel echoes Payload back when
// the button is pressed, and ParsePayload turns it into the command to send.
type Action struct {
	// ID is "<message id>.<decision>" (".<scope>" added for run and
	// platform_session): unique, and a good idempotencyKey for the command, so
	// a double click is a duplicate rather than a second decision.
	ID    string `json:"id"`
	Label string `json:"label"`
	// Payload is the button's value (ShortPayload; ActionPayload for a
	// request without an approvalId). ParsePayload decodes both.
	Payload string `json:"payload"`
	// Approval is the SubmitApprovalDecision the button sends.
	Approval *Approval `json:"approval,omitempty"`
}

// Approval is what a SubmitApprovalDecision needs: the run it goes to and its payload.
type Approval struct {
	RunID  string `json:"runId"`
	ItemID string `json:"itemId"`
	// ApprovalID is set, instead of RunID and ItemID, by ParsePayload of a
	// ShortPayload; never in a message.
	ApprovalID string `json:"-"`
	Decision   string `json:"decision"`
	Scope      string `json:"scope"`
}

// ApprovalRequest is the detail of an awaiting_approval message
// (runtime.item.awaiting_approval): the call's tool, the policy rule that
// asks and why. The arguments are in Text, shortened.
type ApprovalRequest struct {
	// ApprovalID names the request (apr_…); the decision repeats it.
	ApprovalID string `json:"approvalId,omitempty"`
	ToolName   string `json:"toolName,omitempty"`
	RuleID     string `json:"ruleId,omitempty"`
	Reason     string `json:"reason,omitempty"`
}

// Status is the detail of a status message.
type Status struct {
	// Event is the type of the event the notice reports (StatusEvents).
	Event events.Type `json:"event"`
	// ErrorCode is the failure code of runtime.run.failed.
	ErrorCode string `json:"errorCode,omitempty"`
	// Reason is the reason of a cancel or an approval decision.
	Reason string `json:"reason,omitempty"`
	// PauseReason is what a paused run waits for, or what an expired run
	// waited for.
	PauseReason events.PauseReason `json:"pauseReason,omitempty"`
	// Decision and Scope describe an approval decision.
	Decision string `json:"decision,omitempty"`
	Scope    string `json:"scope,omitempty"`
	// Actor is who decided an approval (for one a grant covered: who gave the grant).
	Actor *events.Actor `json:"actor,omitempty"`
	// GrantID is set when a grant given for another call of the same tool
	// and rule decided this one (runtime.approval.decision_submitted grantId).
	GrantID string `json:"grantId,omitempty"`
	// CreatedRunID is the run a follow-up started; later messages of the
	// conversation come from it.
	CreatedRunID string `json:"createdRunId,omitempty"`
}

// StatusEvents lists the event types that become status messages.
func StatusEvents() []events.Type {
	return []events.Type{events.RunFailed, events.RunCancelled, events.RunExpired, events.RunPaused,
		events.ApprovalDecisionSubmitted, events.CommandApplied, events.RunCompleted}
}

// MessageID returns the id of the message made from event seq of run runID.
func MessageID(runID string, seq int64) string {
	return events.DerivedID("imm", runID, strconv.FormatInt(seq, 10))
}

// ConversationID returns the conversation an event's message belongs to: the
// run's platform session, or the run itself when it has none.
func ConversationID(e events.Envelope) string {
	if e.PlatformSessionID != "" {
		return e.PlatformSessionID
	}
	return e.RunID
}
