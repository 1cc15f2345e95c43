package uistream

import (
	"encoding/json"

	"github.com/xbot-runtime/xbot/events"
)

// Chunk is one AI SDK UI message stream chunk. Which fields a chunk carries
// depends on its Type; the constructors below set exactly the fields the
// SDK's schema (ai@6 uiMessageChunkSchema) declares for that type and no
// other, because clients validate chunks against that schema.
type Chunk struct {
	Type               string          `json:"type"`
	ID                 string          `json:"id,omitempty"`
	Delta              string          `json:"delta,omitempty"`
	MessageID          string          `json:"messageId,omitempty"`
	MessageMetadata    *Metadata       `json:"messageMetadata,omitempty"`
	ToolCallID         string          `json:"toolCallId,omitempty"`
	ToolName           string          `json:"toolName,omitempty"`
	ApprovalID         string          `json:"approvalId,omitempty"`
	ApprovalDescriptor json.RawMessage `json:"approvalDescriptor,omitempty"`
	Input              json.RawMessage `json:"input,omitempty"`
	Output             json.RawMessage `json:"output,omitempty"`
	Dynamic            bool            `json:"dynamic,omitempty"`
	ErrorText          string          `json:"errorText,omitempty"`
	Data               json.RawMessage `json:"data,omitempty"`
	Transient          bool            `json:"transient,omitempty"`
	FinishReason       string          `json:"finishReason,omitempty"`
	Reason             string          `json:"reason,omitempty"`
	ProviderMetadata   json.RawMessage `json:"providerMetadata,omitempty"`
}

// Metadata is the messageMetadata of a reply, as the runtime client
// contract names it: ResponseID is the run id, InputIDs the input ids of the user
// inputs the reply answers (each one's Idempotency-Key, or its commandId when
// the client sent none), Origin "input" (every run answers an input; the
// contract's other value, "engine", is for replies no input asked for).
// RetractedPartIDs lists text and reasoning parts (by the part_id in their
// providerMetadata) whose model call failed: they are not part of the
// conversation and a client hides them. Outcome and Usage are set when the
// reply ends.
type Metadata struct {
	ResponseID       string        `json:"response_id"`
	InputIDs         []string      `json:"input_ids"`
	Origin           string        `json:"origin"`
	RetractedPartIDs []string      `json:"retracted_part_ids,omitempty"`
	Outcome          string        `json:"outcome,omitempty"`
	Usage            *events.Usage `json:"usage,omitempty"`
	// Options are the run's effective per-run options, from its capability
	// snapshot (absent for a run frozen before runs had options).
	Options *events.RunOptions `json:"options,omitempty"`
}

// Interaction is the data of a data-interaction part: a question the reply
// waits on. Kind "tool_approval" is answered with SubmitApprovalDecision
// (itemId), kind "question" with AppendUserInput intent clarification
// (interactionId). Both ids are the item's id, which is also the toolCallId
// of the tool part the interaction belongs to.
type Interaction struct {
	InteractionID string `json:"interactionId"`
	ItemID        string `json:"itemId"`
	Kind          string `json:"kind"`
	// Status is open, answered, withdrawn (the run ended or the item failed
	// first) or expired.
	Status   string          `json:"status"`
	ToolName string          `json:"toolName,omitempty"`
	Input    json.RawMessage `json:"input,omitempty"`
	Question string          `json:"question,omitempty"`
	// ApprovalID, RuleID and Reason describe an approval request: the
	// runtime's request id (apr_…), the policy rule that asks and why.
	ApprovalID string `json:"approvalId,omitempty"`
	RuleID     string `json:"ruleId,omitempty"`
	Reason     string `json:"reason,omitempty"`
	Decision   string `json:"decision,omitempty"`
	Scope      string `json:"scope,omitempty"`
	// DecisionReason is the reason the decider gave; DecidedBy who decided
	// (for a call a grant covered: who gave the grant, GrantID).
	DecisionReason string        `json:"decisionReason,omitempty"`
	DecidedBy      *events.Actor `json:"decidedBy,omitempty"`
	GrantID        string        `json:"grantId,omitempty"`
	Answer         string        `json:"answer,omitempty"`
}

// Interaction kinds and statuses.
const (
	KindToolApproval = "tool_approval"
	KindQuestion     = "question"

	InteractionOpen      = "open"
	InteractionAnswered  = "answered"
	InteractionWithdrawn = "withdrawn"
	InteractionExpired   = "expired"
)

// FileChanges is the data of a data-file-changes part: what a tool call
// actually wrote (never derived from the call's arguments).
type FileChanges struct {
	ToolCallID string       `json:"toolCallId"`
	Changes    []FileChange `json:"changes"`
}

// FileChange is one changed file; Diff is a unified diff of what was written.
type FileChange struct {
	Path    string `json:"path"`
	Diff    string `json:"diff"`
	Created bool   `json:"created,omitempty"`
	Bytes   int    `json:"bytes"`
}

// ToolOutputDelta is the data of a transient data-tool-output part: a piece
// of a running tool's output (command stdout/stderr), for live display only.
// The final output arrives with tool-output-available.
type ToolOutputDelta struct {
	ToolCallID string `json:"toolCallId"`
	Delta      string `json:"delta"`
}

// Plan is the data of a data-plan part.
type Plan struct {
	Content string `json:"content"`
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic("uistream: encode " + err.Error()) // only our own plain structs are encoded
	}
	return b
}

// partMetadata is the providerMetadata of a text or reasoning part: the item
// it shows, so a client can retract it or link it to the items API.
func partMetadata(itemID string) json.RawMessage {
	return mustJSON(map[string]map[string]string{"xbot": {"part_id": itemID}})
}

func startChunk(runID string, m Metadata) Chunk {
	return Chunk{Type: "start", MessageID: runID, MessageMetadata: &m}
}

func metadataChunk(m Metadata) Chunk { return Chunk{Type: "message-metadata", MessageMetadata: &m} }

func finishChunk(reason string, m *Metadata) Chunk {
	return Chunk{Type: "finish", FinishReason: reason, MessageMetadata: m}
}

func dataChunk(name, id string, v any, transient bool) Chunk {
	return Chunk{Type: "data-" + name, ID: id, Data: mustJSON(v), Transient: transient}
}

func toolInputChunks(id, name string, input json.RawMessage) []Chunk {
	return []Chunk{
		{Type: "tool-input-start", ToolCallID: id, ToolName: name, Dynamic: true},
		{Type: "tool-input-available", ToolCallID: id, ToolName: name, Input: input, Dynamic: true},
	}
}
