package eventstest

import (
	"encoding/json"
	"strings"

	"github.com/xbot-runtime/xbot/events"
)

// ItemStarted opens item of type typ; data, when not nil, is its Data.
func (l *Log) ItemStarted(item string, typ events.ItemType, data any) *Log {
	l.tb.Helper()
	return l.Add(events.Draft{Type: events.ItemStarted, ItemID: item,
		Payload: events.ItemStartedPayload{ItemType: typ, Data: raw(data)}})
}

// Deltas streams parts of item's text, one runtime.item.delta each.
func (l *Log) Deltas(item string, parts ...string) *Log {
	l.tb.Helper()
	for _, p := range parts {
		l.Add(events.Draft{Type: events.ItemDelta, ItemID: item, Payload: events.ItemDeltaPayload{Delta: p}})
	}
	return l
}

// ItemCompleted closes item with status (events.ItemStatus…) and content;
// data, when not nil, is its Data.
func (l *Log) ItemCompleted(item string, typ events.ItemType, status, content string, data any) *Log {
	l.tb.Helper()
	return l.Add(events.Draft{Type: events.ItemCompleted, ItemID: item, Payload: events.ItemCompletedPayload{
		ItemType: typ, Status: status, Content: content, Data: raw(data)}})
}

// ItemFailed closes item as failed with code (events.ToolErr… or
// events.Fail…) and message.
func (l *Log) ItemFailed(item string, typ events.ItemType, code, message string) *Log {
	l.tb.Helper()
	return l.Add(events.Draft{Type: events.ItemFailed, ItemID: item, Payload: events.ItemFailedPayload{
		ItemType: typ, ErrorCode: code, Message: message}})
}

// Response records a whole model response as assistant_message item: it
// starts, streams a delta per non-empty part, and completes with the parts'
// text and data (the turn, the tool calls it requests, usage).
func (l *Log) Response(item string, data events.AssistantData, parts ...string) *Log {
	l.tb.Helper()
	l.ItemStarted(item, events.ItemAssistantMessage, nil)
	for _, p := range parts {
		if p != "" {
			l.Deltas(item, p)
		}
	}
	return l.ItemCompleted(item, events.ItemAssistantMessage, events.ItemStatusCompleted, strings.Join(parts, ""), data)
}

// ToolStarted opens item of type typ for call c of response item resp, as
// the engine does: its data names the call, and a clarification_request's
// carries the question from the call's arguments.
func (l *Log) ToolStarted(item, resp string, typ events.ItemType, c events.ToolCallRef) *Log {
	l.tb.Helper()
	data := events.ToolCallData{ToolCallID: c.ID, ToolName: c.Name, Arguments: c.Arguments, ResponseItemID: resp}
	if typ == events.ItemClarificationRequest {
		var q struct {
			Question string `json:"question"`
		}
		_ = json.Unmarshal([]byte(c.Arguments), &q) // arguments that are not JSON ask nothing
		data.Question = q.Question
	}
	return l.ItemStarted(item, typ, data)
}

// ToolCompleted closes tool item with res as its result: the content is
// res.Output, and res names call c.
func (l *Log) ToolCompleted(item string, typ events.ItemType, c events.ToolCallRef, res events.ToolResultData) *Log {
	l.tb.Helper()
	res.ToolCallID, res.ToolName = c.ID, c.Name
	return l.ItemCompleted(item, typ, events.ItemStatusCompleted, res.Output, res)
}

// Steer records user text entering the running run as user_message item,
// started and completed. cmd is the AppendUserInput it came from: the
// item's events name it and its data says so (intent steer); with cmd
// empty the item carries neither.
func (l *Log) Steer(item, cmd, text string) *Log {
	l.tb.Helper()
	var data any
	if cmd != "" {
		data = events.UserMessageData{Intent: "steer", CommandID: cmd}
	}
	return l.Add(
		events.Draft{Type: events.ItemStarted, ItemID: item, CommandID: cmd, Payload: events.ItemStartedPayload{
			ItemType: events.ItemUserMessage, Content: text, Data: raw(data)}},
		events.Draft{Type: events.ItemCompleted, ItemID: item, CommandID: cmd, Payload: events.ItemCompletedPayload{
			ItemType: events.ItemUserMessage, Status: events.ItemStatusCompleted, Content: text}})
}
