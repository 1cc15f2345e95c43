package openai

import (
	"encoding/json"
	"strings"

	"github.com/xbot-runtime/xbot/services/engine/model"
)

// The wire types name only fields every supported server accepts. Nothing
// from model.Request outside them (Turn) is ever sent.
type wireRequest struct {
	Model         string        `json:"model"`
	Messages      []wireMessage `json:"messages"`
	Tools         []wireTool    `json:"tools,omitempty"`
	Stream        bool          `json:"stream"`
	StreamOptions streamOptions `json:"stream_options"`
	MaxTokens     int           `json:"max_tokens,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type wireMessage struct {
	Role string `json:"role"`
	// Content is null for an assistant message that only calls tools: every
	// server accepts null there, and some templates render "" as an empty turn.
	Content    *string        `json:"content"`
	ToolCalls  []wireToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
}

type wireToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function wireFunction `json:"function"`
}

type wireFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type wireTool struct {
	Type     string           `json:"type"`
	Function wireToolFunction `json:"function"`
}

type wireToolFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

// emptySchema stands in for a tool without parameters: llama.cpp and vLLM
// templates expect an object schema to be present.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// encodeRequest builds the request body for one call.
func encodeRequest(modelName string, req model.Request) ([]byte, error) {
	w := wireRequest{
		Model:         modelName,
		Messages:      make([]wireMessage, 0, len(req.Messages)),
		Stream:        true,
		StreamOptions: streamOptions{IncludeUsage: true},
		MaxTokens:     max(req.MaxTokens, 0),
	}
	for _, m := range req.Messages {
		w.Messages = append(w.Messages, encodeMessage(m))
	}
	for _, t := range req.Tools {
		params := t.Parameters
		if len(strings.TrimSpace(string(params))) == 0 || string(params) == "null" {
			params = emptySchema
		}
		w.Tools = append(w.Tools, wireTool{Type: "function", Function: wireToolFunction{
			Name: t.Name, Description: t.Description, Parameters: params}})
	}
	return json.Marshal(w)
}

func encodeMessage(m model.Message) wireMessage {
	content := m.Content
	w := wireMessage{Role: string(m.Role), Content: &content, ToolCallID: m.ToolCallID}
	for _, c := range m.ToolCalls {
		args := c.Arguments
		if strings.TrimSpace(args) == "" {
			args = "{}" // "" is not JSON; DashScope and vLLM reject it in history
		}
		w.ToolCalls = append(w.ToolCalls, wireToolCall{ID: c.ID, Type: "function",
			Function: wireFunction{Name: c.Name, Arguments: args}})
	}
	if m.Role == model.RoleAssistant && len(w.ToolCalls) > 0 && content == "" {
		w.Content = nil
	}
	return w
}
