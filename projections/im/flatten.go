package im

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/xbot-runtime/xbot/events"
)

// Flatten returns the chat message an event becomes, and false when it
// becomes none. It is pure: the message depends on e alone, never on earlier
// events, so a projector can flatten records one by one, restart anywhere
// and rebuild, and always publish the same messages with the same ids.
//
// It fails only when e's payload (or the item data it reads) does not
// decode. An event type this build does not know (a newer writer extended the
// catalog) becomes no message.
func Flatten(e events.Envelope) (Message, bool, error) {
	if !events.Known(e.Type) {
		return Message{}, false, nil
	}
	p, err := e.DecodePayload()
	if err != nil {
		return Message{}, false, err
	}
	m, ok, err := flatten(e, p)
	if err != nil || !ok {
		return Message{}, false, err
	}
	m.SchemaVersion = events.SchemaVersion
	m.ID = MessageID(e.RunID, e.Seq)
	m.ConversationID = ConversationID(e)
	m.TenantID, m.RunID, m.Seq, m.CreatedAt = e.TenantID, e.RunID, e.Seq, e.OccurredAt
	if m.Kind == KindAwaitingApproval {
		m.Actions = approvalActions(m.ID, e.RunID, e.ItemID, approvalIDOf(m), e.PlatformSessionID != "")
	}
	return m, true, nil
}

// flatten maps each event type to its message (kind, text, details); Flatten
// fills in the identity. Every catalog type is listed, so the exhaustive
// linter asks for a decision here when the catalog grows.
func flatten(e events.Envelope, p any) (Message, bool, error) {
	switch e.Type {
	case events.ItemStarted:
		return question(e, p.(*events.ItemStartedPayload))
	case events.ItemCompleted:
		return reply(e, p.(*events.ItemCompletedPayload))
	case events.ItemAwaitingApproval:
		return approvalRequest(e, p.(*events.ItemAwaitingApprovalPayload))
	case events.ApprovalDecisionSubmitted:
		return decision(e, p.(*events.ApprovalDecisionPayload)), true, nil
	case events.RunFailed:
		return failed(p.(*events.RunFailedPayload)), true, nil
	case events.RunCancelled:
		return cancelled(p.(*events.RunCancelledPayload)), true, nil
	case events.RunExpired:
		return expired(p.(*events.RunExpiredPayload)), true, nil
	case events.RunPaused:
		return paused(p.(*events.RunPausedPayload))
	case events.RunCompleted:
		return status(Status{Event: events.RunCompleted}, "Done."), true, nil
	case events.CommandApplied:
		return followUp(p.(*events.CommandAppliedPayload))
	case events.RunAccepted, events.RunStarted, events.RunResumed,
		events.RunCheckpointRestored, events.CommandAccepted, events.CommandRejected, events.CommandNoEffect,
		events.CommandDuplicate, events.ItemDelta, events.ItemFailed, events.PermissionGrantApplied,
		events.ContextCompacted, events.CapabilitySnapshotFrozen, events.PermissionGrantRevoked, events.RunQueued,
		events.SandboxAttached:
		return Message{}, false, nil
	}
	return Message{}, false, nil // not in the catalog: Flatten never gets here
}

// reply is a completed assistant_message with text; a response that only
// calls tools has none and shows nothing.
func reply(e events.Envelope, p *events.ItemCompletedPayload) (Message, bool, error) {
	if toolItems[p.ItemType] {
		return toolResult(e, p)
	}
	if p.ItemType != events.ItemAssistantMessage || strings.TrimSpace(p.Content) == "" {
		return Message{}, false, nil
	}
	return Message{Kind: KindAssistantMessage, Text: p.Content, ItemID: e.ItemID,
		Truncated: p.Status == events.ItemStatusTruncated}, true, nil
}

// question is a clarification_request as it opens: the engine writes the
// question into the item's data (older writers into its content).
func question(e events.Envelope, p *events.ItemStartedPayload) (Message, bool, error) {
	if p.ItemType != events.ItemClarificationRequest {
		return Message{}, false, nil
	}
	var data events.ToolCallData
	if len(p.Data) > 0 {
		if err := events.Unmarshal(p.Data, &data); err != nil {
			return Message{}, false, fmt.Errorf("decode clarification_request data of item %s: %w", e.ItemID, err)
		}
	}
	text := data.Question
	if strings.TrimSpace(text) == "" {
		text = p.Content
	}
	if strings.TrimSpace(text) == "" {
		return Message{}, false, nil // arguments without a question: the tool fails and nothing is asked
	}
	return Message{Kind: KindClarificationRequest, Text: text, ItemID: e.ItemID}, true, nil
}

func approvalRequest(e events.Envelope, p *events.ItemAwaitingApprovalPayload) (Message, bool, error) {
	return Message{Kind: KindAwaitingApproval, Text: approvalText(p), ItemID: e.ItemID, Request: &ApprovalRequest{
		ApprovalID: p.ApprovalID, ToolName: p.ToolName, RuleID: p.RuleID, Reason: p.Reason}}, true, nil
}

func decision(e events.Envelope, p *events.ApprovalDecisionPayload) Message {
	actor := p.Actor
	m := status(Status{Event: events.ApprovalDecisionSubmitted, Decision: p.Decision,
		Scope: p.Scope, Reason: p.Reason, Actor: &actor, GrantID: p.GrantID}, decisionText(p))
	m.ItemID = e.ItemID
	return m
}

func failed(p *events.RunFailedPayload) Message {
	text := "The run failed (" + p.ErrorCode + ")."
	if p.Message != "" {
		text = "The run failed (" + p.ErrorCode + "): " + p.Message
	}
	return status(Status{Event: events.RunFailed, ErrorCode: p.ErrorCode}, text)
}

func cancelled(p *events.RunCancelledPayload) Message {
	text := "The run was cancelled."
	if p.Reason != "" {
		text = "The run was cancelled: " + p.Reason
	}
	return status(Status{Event: events.RunCancelled, Reason: p.Reason}, text)
}

// expired tells the conversation that nobody answered in time; the items
// the run waited on are not announced one by one.
func expired(p *events.RunExpiredPayload) Message {
	return status(Status{Event: events.RunExpired, PauseReason: p.PauseReason}, expiredText(p))
}

// paused shows only pauses nothing else announces: a run waiting for an
// answer or a decision already sent the question or the approval request.
func paused(p *events.RunPausedPayload) (Message, bool, error) {
	var text string
	switch p.PauseReason {
	case events.PauseAwaitingExternalToolResult:
		text = "Paused: waiting for an external tool result."
	case events.PauseAwaitingCheckpointRestore:
		text = "Paused: waiting for a checkpoint to be restored."
	case events.PauseAwaitingApproval, events.PauseAwaitingUserInput:
		return Message{}, false, nil
	default:
		return Message{}, false, nil // Fold refuses unknown reasons; show nothing rather than guess
	}
	return status(Status{Event: events.RunPaused, PauseReason: p.PauseReason}, text), true, nil
}

// followUp is the applied follow-up that started the conversation's next run.
func followUp(p *events.CommandAppliedPayload) (Message, bool, error) {
	if p.CreatedRunID == "" {
		return Message{}, false, nil
	}
	return status(Status{Event: events.CommandApplied, CreatedRunID: p.CreatedRunID},
		"Follow-up started."), true, nil
}

func status(s Status, text string) Message {
	return Message{Kind: KindStatus, Text: text, Status: &s}
}

// approvalIDOf is the approval id of an awaiting_approval message, "" when
// its request has none.
func approvalIDOf(m Message) string {
	if m.Request == nil {
		return ""
	}
	return m.Request.ApprovalID
}

// toolItems are the item types whose completion is a tool call's result.
var toolItems = map[events.ItemType]bool{events.ItemCommandExecution: true, events.ItemFileChange: true,
	events.ItemToolCall: true, events.ItemMCPToolCall: true}

// ToolResultTextMax bounds the text of a tool_result message (bytes of
// output shown; the whole output is in the run's items).
const ToolResultTextMax = 400

// toolResult is a completed tool call: the tool and its output as the model
// receives it, shortened to ToolResultTextMax bytes on a rune boundary.
func toolResult(e events.Envelope, p *events.ItemCompletedPayload) (Message, bool, error) {
	var data events.ToolResultData
	if len(p.Data) > 0 {
		if err := events.Unmarshal(p.Data, &data); err != nil {
			return Message{}, false, fmt.Errorf("decode tool result data of item %s: %w", e.ItemID, err)
		}
	}
	out := strings.TrimSpace(data.Output)
	if len(out) > ToolResultTextMax {
		cut := ToolResultTextMax
		for cut > 0 && !utf8.RuneStart(out[cut]) {
			cut--
		}
		out = out[:cut] + "…"
	}
	name := data.ToolName
	if name == "" {
		name = string(p.ItemType)
	}
	text := name + " finished"
	if out != "" {
		text = name + ": " + out
	}
	return Message{Kind: KindToolResult, Text: text, ItemID: e.ItemID}, true, nil
}
