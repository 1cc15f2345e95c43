package uistream

import (
	"encoding/json"
	"strings"

	"github.com/xbot-runtime/xbot/events"
)

// itemState is what the mapper remembers of an item.
type itemState struct {
	typ events.ItemType
	// text is the text or reasoning streamed so far; partOpen says its
	// text-start/reasoning-start went out and its end did not.
	text     strings.Builder
	partOpen bool
	// tool says tool-input chunks went out for the item (it is a tool part
	// with toolCallId = the item id).
	tool        bool
	toolName    string
	input       json.RawMessage
	question    string
	denied      bool
	interaction *Interaction
}

func (m *Mapper) itemStarted(id string, p *events.ItemStartedPayload) {
	it := &itemState{typ: p.ItemType}
	m.items[id] = it
	switch {
	case p.ItemType == events.ItemReasoning:
		m.beginStep()
		m.inCall = true
	case p.ItemType == events.ItemAssistantMessage:
		if !m.inCall {
			m.beginStep()
		}
		m.inCall = false
	case p.ItemType.RunsTool():
		var call events.ToolCallData
		_ = events.Unmarshal(p.Data, &call) // a tool item without call data still gets a card
		it.question = call.Question
		m.startTool(id, it, call.ToolName, call.Arguments)
	}
}

// startTool sends the tool part's input chunks. The arguments are the JSON
// the model produced; when they do not parse, the raw text is the input.
func (m *Mapper) startTool(id string, it *itemState, name, args string) {
	if name == "" {
		name = string(it.typ)
	}
	it.tool, it.toolName, it.input = true, name, toolInput(args)
	m.inCall = false
	m.emit(toolInputChunks(id, name, it.input)...)
}

func toolInput(args string) json.RawMessage {
	if strings.TrimSpace(args) == "" {
		return json.RawMessage("{}")
	}
	if json.Valid([]byte(args)) {
		return json.RawMessage(args)
	}
	return mustJSON(args)
}

func (m *Mapper) itemDelta(id, delta string) {
	it := m.items[id]
	if it == nil || delta == "" {
		return
	}
	switch {
	case it.typ == events.ItemAssistantMessage || it.typ == events.ItemReasoning:
		m.streamText(id, it, delta)
	case it.tool:
		m.emit(dataChunk("tool-output", "", ToolOutputDelta{ToolCallID: id, Delta: delta}, true))
	}
}

// partKind is "text" or "reasoning": the chunk family of a text-like item.
func partKind(t events.ItemType) string {
	if t == events.ItemReasoning {
		return "reasoning"
	}
	return "text"
}

// streamText sends delta of a text or reasoning item, starting its part on
// the first piece (an item with no text gets no part at all).
func (m *Mapper) streamText(id string, it *itemState, delta string) {
	kind := partKind(it.typ)
	if !it.partOpen {
		it.partOpen = true
		m.emit(Chunk{Type: kind + "-start", ID: id, ProviderMetadata: partMetadata(id)})
	}
	it.text.WriteString(delta)
	m.emit(Chunk{Type: kind + "-delta", ID: id, Delta: delta})
}

// endText closes a text or reasoning part; the completed content is the
// authority, so text it has beyond what was streamed is sent first.
func (m *Mapper) endText(id string, it *itemState, content string) {
	if streamed := it.text.String(); len(content) > len(streamed) && strings.HasPrefix(content, streamed) {
		m.streamText(id, it, content[len(streamed):])
	}
	if it.partOpen {
		it.partOpen = false
		m.emit(Chunk{Type: partKind(it.typ) + "-end", ID: id})
	}
}

func (m *Mapper) itemCompleted(id string, p *events.ItemCompletedPayload) {
	it := m.items[id]
	if it == nil {
		return
	}
	switch {
	case it.typ == events.ItemAssistantMessage:
		m.assistantCompleted(id, it, p)
	case it.typ == events.ItemReasoning:
		m.endText(id, it, p.Content)
		if p.Status == events.ItemStatusTruncated {
			m.inCall = false // no assistant_message follows an interrupted call
		}
	case it.tool:
		m.toolCompleted(id, it, p)
	case it.typ == events.ItemPlan:
		m.emit(dataChunk("plan", id, Plan{Content: p.Content}, false))
	}
}

func (m *Mapper) assistantCompleted(id string, it *itemState, p *events.ItemCompletedPayload) {
	m.endText(id, it, p.Content)
	m.inCall = false
	var data events.AssistantData
	if events.Unmarshal(p.Data, &data) != nil {
		return
	}
	m.finishReason = data.FinishReason
	if data.Usage != nil {
		m.hasUsage = true
		m.usage.PromptTokens += data.Usage.PromptTokens
		m.usage.CompletionTokens += data.Usage.CompletionTokens
		m.usage.TotalTokens += data.Usage.TotalTokens
	}
}

// toolOutput is the output of a tool part: what the model received, and the
// structured details of a command, a file change or an MCP server's result
// (its content blocks, images included, and structured content).
type toolOutput struct {
	Output     string                 `json:"output"`
	Exec       *events.ExecData       `json:"exec,omitempty"`
	FileChange *events.FileChangeData `json:"fileChange,omitempty"`
	MCP        *events.MCPResult      `json:"mcp,omitempty"`
}

// toolCompleted ends a tool part with its output; an MCP result the server
// marked isError ends it as output-error (the full result stays in the
// item).
func (m *Mapper) toolCompleted(id string, it *itemState, p *events.ItemCompletedPayload) {
	var res events.ToolResultData
	if events.Unmarshal(p.Data, &res) != nil || (res.Output == "" && p.Content != "") {
		res.Output = p.Content
	}
	if res.MCP != nil && res.MCP.IsError {
		m.emit(Chunk{Type: "tool-output-error", ToolCallID: id, ErrorText: errorText(events.ToolErrToolError, res.Output)})
	} else {
		m.emit(Chunk{Type: "tool-output-available", ToolCallID: id,
			Output: mustJSON(toolOutput{Output: res.Output, Exec: res.Exec, FileChange: res.FileChange, MCP: res.MCP})})
	}
	if fc := res.FileChange; fc != nil {
		m.emit(dataChunk("file-changes", id, FileChanges{ToolCallID: id,
			Changes: []FileChange{{Path: fc.Path, Diff: fc.Diff, Created: fc.Created, Bytes: fc.Bytes}}}, false))
	}
	if in := it.interaction; in != nil && in.Status == InteractionOpen {
		in.Status = InteractionAnswered
		if in.Kind == KindQuestion {
			in.Answer = res.Output
		}
		m.emit(dataChunk("interaction", id, in, false))
	}
}

func (m *Mapper) itemFailed(id string, p *events.ItemFailedPayload) {
	it := m.items[id]
	if it == nil {
		return
	}
	switch {
	case it.typ == events.ItemAssistantMessage || it.typ == events.ItemReasoning:
		m.endText(id, it, "")
		m.inCall = false
		if it.text.Len() > 0 { // the failed call's text was shown: retract it
			m.meta.RetractedPartIDs = append(m.meta.RetractedPartIDs, id)
			m.metadataChanged()
		}
	case it.tool:
		m.toolFailed(id, it, p)
	}
}

// toolFailed ends a tool part: output-denied for a denied call (unless its
// decision did already), else output-error with the code and message (a
// call blocked by policy shows blocked_by_policy and the rule's reason). An
// open interaction of the item is withdrawn or expired.
func (m *Mapper) toolFailed(id string, it *itemState, p *events.ItemFailedPayload) {
	switch {
	case p.ErrorCode == events.ToolErrDeniedByUser:
		m.deny(id, it)
	case !it.denied:
		m.emit(Chunk{Type: "tool-output-error", ToolCallID: id, ErrorText: errorText(p.ErrorCode, p.Message)})
	}
	if in := it.interaction; in != nil && in.Status == InteractionOpen {
		in.Status = InteractionWithdrawn
		if p.ErrorCode == events.ToolErrExpired {
			in.Status = InteractionExpired
		}
		m.emit(dataChunk("interaction", id, in, false))
	}
}
