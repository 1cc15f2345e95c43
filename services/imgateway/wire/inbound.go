package wire

import (
	"encoding/json"
	"regexp"
	"strings"
	"time"

	"github.com/xbot-runtime/xbot/events"
)

// Conversation types after normalization: direct is private, guild is channel.
const (
	TypePrivate = "private"
	TypeGroup   = "group"
	TypeChannel = "channel"
)

// messageIDPattern is the rule a client's messageId must match; one that does
// not is ignored.
var messageIDPattern = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,160}$`)

// Segment is one message segment {type, data}.
type Segment struct {
	Type string         `json:"type"`
	Data map[string]any `json:"data"`
}

// Action is an action segment's {id, payload}: a pressed button.
type Action struct {
	ID      string
	Payload string
}

// AgentRun is the frame's agentRun: the per-run options a client asks for.
type AgentRun struct {
	WorkingDirectory string `json:"workingDirectory"`
	SafetyMode       string `json:"safetyMode"`
	ApprovalMode     string `json:"approvalMode"`
	NetworkAccess    *bool  `json:"networkAccess"`
}

// Message is an inbound frame, normalized.
type Message struct {
	// Type is private, group or channel.
	Type string
	// ID is the conversation id; the endpoint's owner when the frame has none.
	ID string
	// Text is the message's text: its text segments, else the frame's text,
	// else the payload of its first action.
	Text string
	// Actions are the frame's action segments.
	Actions []Action
	// TextIsPayload says Text is the first action's payload: the frame had
	// no text of its own.
	TextIsPayload bool
	// MessageID is the client's messageId when it matches the pattern, else "".
	MessageID string
	// Timestamp is the frame's, or the time it was received (Unix ms).
	Timestamp int64
	// Options are the frame's agentRun as per-run options; nil without one.
	Options *events.RunOptions
}

type inboundFrame struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	Content   json.RawMessage `json:"content"`
	Text      string          `json:"text"`
	MessageID string          `json:"messageId"`
	Timestamp int64           `json:"timestamp"`
	AgentRun  *AgentRun       `json:"agentRun"`
}

// ParseInbound normalizes a client's frame. A frame that is not a JSON
// object is one plain text message of the owner's private conversation.
func ParseInbound(raw []byte, owner string, now time.Time) Message {
	m := Message{Type: TypePrivate, ID: owner, Timestamp: now.UnixMilli()}
	var f inboundFrame
	if err := json.Unmarshal(raw, &f); err != nil {
		m.Text = string(raw)
		return m
	}
	m.Type = normalType(f.Type)
	if f.ID != "" {
		m.ID = f.ID
	}
	if f.Timestamp > 0 {
		m.Timestamp = f.Timestamp
	}
	if messageIDPattern.MatchString(f.MessageID) {
		m.MessageID = f.MessageID
	}
	text, actions := readContent(f.Content)
	m.Actions = actions
	switch {
	case text != "":
		m.Text = text
	case f.Text != "":
		m.Text = f.Text
	case len(actions) > 0:
		m.Text, m.TextIsPayload = actions[0].Payload, true
	}
	m.Options = f.AgentRun.options()
	return m
}

// normalType maps the seed's conversation types: direct is private, guild
// is channel, anything else (or none) is private.
func normalType(t string) string {
	switch t {
	case TypeGroup:
		return TypeGroup
	case TypeChannel, "guild":
		return TypeChannel
	default:
		return TypePrivate
	}
}

// readContent returns the text of content's text segments and its actions.
// content is a string (one text segment) or an array of segments.
func readContent(content json.RawMessage) (string, []Action) {
	if len(content) == 0 {
		return "", nil
	}
	var s string
	if json.Unmarshal(content, &s) == nil {
		return s, nil
	}
	var segs []Segment
	if json.Unmarshal(content, &segs) != nil {
		return "", nil
	}
	var (
		texts   []string
		actions []Action
	)
	for _, seg := range segs {
		switch seg.Type {
		case "text":
			if t, _ := seg.Data["text"].(string); t != "" {
				texts = append(texts, t)
			}
		case "action":
			if a, ok := readAction(seg.Data); ok {
				actions = append(actions, a)
			}
		}
	}
	return strings.Join(texts, ""), actions
}

// readAction reads an action segment's data: a missing id or payload takes
// the other's value.
func readAction(data map[string]any) (Action, bool) {
	id, _ := data["id"].(string)
	payload, _ := data["payload"].(string)
	if id == "" {
		id = payload
	}
	if payload == "" {
		payload = id
	}
	return Action{ID: id, Payload: payload}, id != ""
}

// maxWorkingDirectory is the seed's bound on agentRun.workingDirectory.
const maxWorkingDirectory = 4096

// options maps agentRun onto per-run options. Values the seed does not name
// take the defaults (left unset, so the profile's default applies).
func (a *AgentRun) options() *events.RunOptions {
	if a == nil {
		return nil
	}
	o := &events.RunOptions{}
	if len(a.WorkingDirectory) <= maxWorkingDirectory {
		o.WorkingDirectory = a.WorkingDirectory
	}
	switch events.SafetyMode(a.SafetyMode) {
	case events.SafetyReadOnly, events.SafetyWorkspaceWrite, events.SafetyDangerFullAccess:
		o.SafetyMode = events.SafetyMode(a.SafetyMode)
	}
	switch events.ApprovalMode(a.ApprovalMode) {
	case events.ApprovalAsk, events.ApprovalAuto, events.ApprovalBypass:
		o.ApprovalMode = events.ApprovalMode(a.ApprovalMode)
	}
	o.NetworkAccess = a.NetworkAccess
	if o.SafetyMode == events.SafetyDangerFullAccess {
		on := true
		o.NetworkAccess = &on
	}
	if *o == (events.RunOptions{}) {
		return nil
	}
	return o
}
