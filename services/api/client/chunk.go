package client

import (
	"encoding/json"
	"fmt"

	"github.com/xbot-runtime/xbot/events"
)

// Chunk is one chunk of a UI message stream: a Vercel AI SDK UI message
// chunk (ai@6's uiMessageChunkSchema) as xbot sends it, with its position
// in the stream. Which fields are set depends on Type (start, text-delta,
// tool-input-available, tool-approval-request, data-interaction, finish,
// …); docs/clients.md and projections/uistream describe the mapping.
type Chunk struct {
	// EventID is the chunk's position (its SSE id): "N" or "N.i" in a run
	// stream, "<runId>:N" or "<runId>:N.i" in a session stream. A stream
	// opened with StreamOptions.After = EventID continues right after it.
	EventID string `json:"-"`
	// Raw is the chunk's JSON exactly as the server sent it.
	Raw json.RawMessage `json:"-"`

	Type string `json:"type"`
	// ID is the part id of a text, reasoning or data part.
	ID                 string           `json:"id,omitempty"`
	Delta              string           `json:"delta,omitempty"`
	MessageID          string           `json:"messageId,omitempty"`
	MessageMetadata    *MessageMetadata `json:"messageMetadata,omitempty"`
	ToolCallID         string           `json:"toolCallId,omitempty"`
	ToolName           string           `json:"toolName,omitempty"`
	ApprovalID         string           `json:"approvalId,omitempty"`
	ApprovalDescriptor json.RawMessage  `json:"approvalDescriptor,omitempty"`
	Input              json.RawMessage  `json:"input,omitempty"`
	Output             json.RawMessage  `json:"output,omitempty"`
	Dynamic            bool             `json:"dynamic,omitempty"`
	ErrorText          string           `json:"errorText,omitempty"`
	Data               json.RawMessage  `json:"data,omitempty"`
	Transient          bool             `json:"transient,omitempty"`
	FinishReason       string           `json:"finishReason,omitempty"`
	Reason             string           `json:"reason,omitempty"`
	ProviderMetadata   json.RawMessage  `json:"providerMetadata,omitempty"`
}

// The chunk types a reply's lifecycle shows in, and the data parts xbot sends.
const (
	ChunkStart           = "start"
	ChunkFinish          = "finish"
	ChunkAbort           = "abort"
	ChunkError           = "error"
	ChunkMessageMetadata = "message-metadata"
	ChunkApprovalRequest = "tool-approval-request"
	ChunkDataInteraction = "data-interaction"
	ChunkDataStatus      = "data-status"
	// FinishToolCalls is the finishReason of a finish that pauses a reply
	// (it waits on an interaction); the reply's next chunk reopens the same
	// message with a start chunk of the same messageId.
	FinishToolCalls = "tool-calls"
)

// MessageMetadata is a reply's messageMetadata: ResponseID is the run id,
// InputIDs the input ids (Idempotency-Keys) of the user inputs it answers,
// Origin "input"; Outcome (completed, failed, expired, cancelled) and Usage
// are set on the reply's last chunks. RetractedPartIDs lists text and
// reasoning parts (by providerMetadata.xbot.part_id) that are not part of
// the conversation.
type MessageMetadata struct {
	ResponseID       string             `json:"response_id"`
	InputIDs         []string           `json:"input_ids"`
	Origin           string             `json:"origin"`
	RetractedPartIDs []string           `json:"retracted_part_ids,omitempty"`
	Outcome          string             `json:"outcome,omitempty"`
	Usage            *events.Usage      `json:"usage,omitempty"`
	Options          *events.RunOptions `json:"options,omitempty"`
}

// InteractionPart is the data of a data-interaction chunk: an approval
// request (Kind "tool_approval", answered with DecideApproval naming ItemID)
// or a question (Kind "question", answered with a clarification naming
// InteractionID). Status is open, answered, withdrawn (the run ended or the
// item failed first) or expired.
type InteractionPart struct {
	InteractionID  string          `json:"interactionId"`
	ItemID         string          `json:"itemId"`
	Kind           string          `json:"kind"`
	Status         string          `json:"status"`
	ToolName       string          `json:"toolName,omitempty"`
	Input          json.RawMessage `json:"input,omitempty"`
	Question       string          `json:"question,omitempty"`
	ApprovalID     string          `json:"approvalId,omitempty"`
	RuleID         string          `json:"ruleId,omitempty"`
	Reason         string          `json:"reason,omitempty"`
	Decision       string          `json:"decision,omitempty"`
	Scope          string          `json:"scope,omitempty"`
	DecisionReason string          `json:"decisionReason,omitempty"`
	DecidedBy      *events.Actor   `json:"decidedBy,omitempty"`
	GrantID        string          `json:"grantId,omitempty"`
	Answer         string          `json:"answer,omitempty"`
}

// Interaction kinds and statuses of an InteractionPart.
const (
	KindToolApproval     = "tool_approval"
	KindQuestion         = "question"
	InteractionOpen      = "open"
	InteractionAnswered  = "answered"
	InteractionWithdrawn = "withdrawn"
	InteractionExpired   = "expired"
)

// StatusPart is the data of a transient data-status chunk: what the run
// RunID is doing — working, waiting (Reason "queued" or its pauseReason)
// or idle. The last one a session stream sent is the session's status.
type StatusPart struct {
	Status string `json:"status"`
	RunID  string `json:"runId"`
	Reason string `json:"reason,omitempty"`
}

// DataAs decodes the chunk's data (of a data-… chunk) into v.
func (c Chunk) DataAs(v any) error {
	if len(c.Data) == 0 {
		return fmt.Errorf("chunk %s (%s) has no data", c.EventID, c.Type)
	}
	if err := json.Unmarshal(c.Data, v); err != nil {
		return fmt.Errorf("chunk %s (%s): %w", c.EventID, c.Type, err)
	}
	return nil
}

// parseChunk decodes one server-sent event of a UI message stream.
func parseChunk(ev StreamEvent) (Chunk, error) {
	var c Chunk
	if err := json.Unmarshal([]byte(ev.Data), &c); err != nil {
		return Chunk{}, fmt.Errorf("chunk %s is not a UI message chunk: %w", ev.ID, err)
	}
	if c.Type == "" {
		return Chunk{}, fmt.Errorf("chunk %s has no type", ev.ID)
	}
	c.EventID, c.Raw = ev.ID, json.RawMessage(ev.Data)
	return c, nil
}
