// Package model is the interface between the agent loop and language models:
// one Provider interface, provider-neutral messages, and the typed errors
// every provider returns. Providers live in subpackages (openai, scripted).
//
// The message types carry only what a provider may see. Runtime fields (item
// ids, seq, status) never appear here, so they cannot leak into a request.
package model

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// Role is the author of a message.
type Role string

// Roles.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Message is one provider message.
type Message struct {
	Role    Role   `json:"role"`
	Content string `json:"content"`
	// ToolCalls are the calls an assistant message made.
	ToolCalls []ToolCall `json:"toolCalls,omitempty"`
	// ToolCallID names the call a tool message answers.
	ToolCallID string `json:"toolCallId,omitempty"`
}

// ToolCall is a function call requested by the model. Arguments is the JSON
// text exactly as the model produced it (it may be malformed).
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// ToolSpec describes a tool offered to the model.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"` // JSON Schema of the arguments object
}

// Request is one model call.
type Request struct {
	// Model is the provider's model name.
	Model    string
	Messages []Message
	Tools    []ToolSpec
	// MaxTokens bounds the completion; 0 means the provider's default.
	MaxTokens int
	// Turn is the 0-based index of this model call within the run. It is not
	// sent to any provider; the scripted provider uses it to pick its turn.
	Turn int
	// Purpose is "" for an agent turn and PurposeCompaction for a summarising
	// call, which is not a turn (Turn is then meaningless). It is not sent to
	// any provider.
	Purpose string
	// Attempt is 0 for the first attempt of this turn and 1 for the retry
	// after a context-overflow recovery (a compaction in between). It is not
	// sent to any provider; the scripted provider uses it to stop raising a
	// scripted overflow.
	Attempt int
}

// PurposeCompaction is the Request.Purpose of a call that summarises the
// conversation for a context compaction.
const PurposeCompaction = "compaction"

// Usage is the token accounting of one call.
type Usage struct {
	PromptTokens     int `json:"promptTokens"`
	CompletionTokens int `json:"completionTokens"`
	TotalTokens      int `json:"totalTokens"`
}

// Response is a complete model response.
type Response struct {
	Text      string
	Reasoning string
	ToolCalls []ToolCall
	// FinishReason is the provider's reason: stop, tool_calls, length, ...
	FinishReason string
	Usage        Usage
	// Model is the model that answered, as the provider reports it.
	Model string
}

// Delta is a piece of a streaming response.
type Delta struct {
	Text      string
	Reasoning string
}

// Provider calls a model. Stream calls onDelta for each piece of text as it
// arrives (never concurrently) and returns the complete response. When ctx
// ends mid-stream it returns what arrived so far together with ctx's error.
type Provider interface {
	Stream(ctx context.Context, req Request, onDelta func(Delta)) (Response, error)
}

// ErrContextOverflow is wrapped by errors meaning the request does not fit the
// model's context window.
var ErrContextOverflow = errors.New("model context window exceeded")

// Error is a failed model call as the provider reported it. The message never
// contains credentials.
type Error struct {
	// Status is the HTTP status, 0 for transport errors and mid-stream errors.
	Status int
	// Code is the provider's error code or type, when it gave one.
	Code    string
	Message string
	// Retryable says whether repeating the same request may succeed.
	Retryable bool
	// Overflow marks a context-window error (errors.Is(err, ErrContextOverflow)).
	Overflow bool
}

func (e *Error) Error() string {
	s := "model call failed"
	if e.Status != 0 {
		s += fmt.Sprintf(" (HTTP %d)", e.Status)
	}
	if e.Code != "" {
		s += " [" + e.Code + "]"
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// Is makes errors.Is(err, ErrContextOverflow) true for overflow errors.
func (e *Error) Is(target error) bool { return target == ErrContextOverflow && e.Overflow }
