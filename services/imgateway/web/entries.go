package web

import (
	"github.com/xbot-runtime/xbot/projections/im"
	"github.com/xbot-runtime/xbot/services/api/client"
)

// Entry is one message of a conversation's history, shaped like the wire's
// reply frame so that the page renders both alike.
type Entry struct {
	// From is "user" (what the conversation sent) or "bot".
	From string `json:"from"`
	// Content is the message's segments: text, or one tool segment
	// ({name, input, output, status, exitCode}) for a tool call.
	Content   []Segment `json:"content"`
	Timestamp int64     `json:"timestamp"`
	RunID     string    `json:"runId"`
	ItemID    string    `json:"itemId,omitempty"`
	// MessageID is the id of the outbox message the same item became
	// (im.MessageID of its event), which a reply frame carries as messageId:
	// a page shows a message that came both live and from the history once.
	MessageID string `json:"messageId,omitempty"`
}

// Segment is a message segment, {type, data}.
type Segment struct {
	Type string         `json:"type"`
	Data map[string]any `json:"data"`
}

// textSegment is a text segment of s.
func textSegment(s string) Segment { return Segment{Type: "text", Data: map[string]any{"text": s}} }

// toolTypes are the item types that run a tool (events.ItemType.RunsTool).
var toolTypes = map[string]bool{"command_execution": true, "file_change": true, "tool_call": true, "mcp_tool_call": true}

// RunEntries returns the history entries of a run and its items (in log
// order): the run's input, then its messages, questions and tool calls.
// Reasoning, plans and compactions are not chat messages and are left out.
func RunEntries(run client.Run, items []client.Item) []Entry {
	out := make([]Entry, 0, len(items)+1)
	if run.Input.Content != "" {
		out = append(out, Entry{From: "user", Content: []Segment{textSegment(run.Input.Content)},
			Timestamp: run.CreatedAt, RunID: run.RunID})
	}
	for _, it := range items {
		if e, ok := itemEntry(it); ok {
			out = append(out, e)
		}
	}
	return out
}

// itemEntry is the entry of one item, if it is a chat message.
func itemEntry(it client.Item) (Entry, bool) {
	e := Entry{From: "bot", Timestamp: it.StartedAt, RunID: it.RunID, ItemID: it.ItemID}
	output := ""
	if it.Output != nil {
		output = *it.Output
	}
	switch {
	case it.Type == "user_message" && output != "":
		e.From, e.Content = "user", []Segment{textSegment(output)}
	case it.Type == "assistant_message" && output != "":
		// The outbox message of a reply is made from its completion, the item's last event.
		e.Content, e.MessageID = []Segment{textSegment(output)}, im.MessageID(it.RunID, it.UpdatedSeq)
	case it.Type == "clarification_request":
		// The outbox message of a question is made from its start.
		e.Content, e.MessageID = []Segment{textSegment(questionText(it.Status, output))}, im.MessageID(it.RunID, it.StartedSeq)
	case toolTypes[it.Type]:
		e.Content = []Segment{toolSegment(it, output)}
	default:
		return Entry{}, false
	}
	return e, true
}

// questionText is what a question's entry says: the question's answer is
// read back as the next user message, so an open question only says it waits.
func questionText(status, output string) string {
	if output != "" {
		return output
	}
	if status == "completed" {
		return "(a question, answered)"
	}
	return "(a question waits for your answer)"
}

// toolSegment is a tool call's segment.
func toolSegment(it client.Item, output string) Segment {
	data := map[string]any{"name": it.ToolName, "input": it.Input, "output": output, "status": it.Status}
	if it.ExitCode != nil {
		data["exitCode"] = *it.ExitCode
	}
	if it.ErrorMessage != "" {
		data["error"] = it.ErrorMessage
	}
	return Segment{Type: "tool", Data: data}
}
