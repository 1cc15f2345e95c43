package wire

import (
	"github.com/xbot-runtime/xbot/projections/im"
)

// ShellIsolation is the ready frame's report of the sandbox provider in use.
type ShellIsolation struct {
	Available bool   `json:"available"`
	Provider  string `json:"provider"`
	Message   string `json:"message,omitempty"`
}

// Frame is a frame the gateway sends: ready, error, or a reply in a
// conversation (Type private, group or channel).
type Frame struct {
	Type     string `json:"type"`
	ID       string `json:"id"`
	Bot      string `json:"bot,omitempty"`
	Endpoint string `json:"endpoint"`
	// MessageID is the outbox message's id (replies only), for a client's own dedupe.
	MessageID string    `json:"messageId,omitempty"`
	Content   []Segment `json:"content"`
	Timestamp int64     `json:"timestamp"`
	// Ready only.
	WorkingDirectory string          `json:"workingDirectory,omitempty"`
	CanExecute       *bool           `json:"canExecute,omitempty"`
	ShellIsolation   *ShellIsolation `json:"shellIsolation,omitempty"`
}

// Frame types that are not conversations.
const (
	TypeReady = "ready"
	TypeError = "error"
)

// TextSegment is a text segment.
func TextSegment(text string) Segment {
	return Segment{Type: "text", Data: map[string]any{"text": text}}
}

// Reply is the reply frame of an outbox message in conversation c: its text
// as a text segment and each button as an action segment {id, payload, label}.
func Reply(c Conversation, m im.Message) Frame {
	content := []Segment{TextSegment(m.Text)}
	for _, a := range m.Actions {
		content = append(content, Segment{Type: "action", Data: map[string]any{"id": a.ID, "payload": a.Payload, "label": a.Label}})
	}
	return Frame{Type: c.Type, ID: c.ID, Bot: c.Endpoint, Endpoint: c.Endpoint, MessageID: m.ID,
		Content: content, Timestamp: m.CreatedAt}
}

// Notice is a ready or error frame with one text segment.
func Notice(typ, endpoint, owner, text string, now int64) Frame {
	return Frame{Type: typ, ID: owner, Endpoint: endpoint, Content: []Segment{TextSegment(text)}, Timestamp: now}
}
