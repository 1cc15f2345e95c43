// Package scripted is a model provider that plays a profile's script: text,
// reasoning, tool calls, errors and delays, with no network. xbot dev and the
// tests use it; it streams exactly like a real provider, so the engine cannot
// tell the difference.
package scripted

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/xbot-runtime/xbot/services/engine/model"
	"github.com/xbot-runtime/xbot/services/engine/profile"
)

// defaultChunk is the delta size when a turn does not set one.
const defaultChunk = 16

// Provider plays Script[req.Turn]; past the end it replays the last turn, so a
// script ending in a tool call loops until a budget stops it. A compaction
// call (model.PurposeCompaction) consumes no turn: it is answered with a
// summary read from the request (see summarize).
type Provider struct {
	Script []profile.Turn
	// Observe, when set, sees every request (tests assert what the model was sent).
	Observe func(model.Request)
}

// New returns a provider for a scripted profile.
func New(script []profile.Turn) *Provider { return &Provider{Script: script} }

// Stream implements model.Provider.
func (p *Provider) Stream(ctx context.Context, req model.Request, onDelta func(model.Delta)) (model.Response, error) {
	if p.Observe != nil {
		p.Observe(req)
	}
	if req.Purpose == model.PurposeCompaction {
		return p.compact(ctx, req, onDelta)
	}
	if len(p.Script) == 0 {
		return model.Response{}, &model.Error{Status: 400, Code: "empty_script", Message: "the scripted model has no turns"}
	}
	t := p.Script[min(req.Turn, len(p.Script)-1)]
	if t.Error != "" && (t.ErrorAttempts == 0 || req.Attempt < t.ErrorAttempts) {
		return model.Response{}, scriptedError(t.Error)
	}
	input := lastUser(req.Messages)
	resp := model.Response{Model: profile.ModelScripted, FinishReason: "stop"}
	var err error
	if resp.Reasoning, err = stream(ctx, t, t.Reasoning, func(s string) { onDelta(model.Delta{Reasoning: s}) }); err != nil {
		return resp, err
	}
	if resp.Text, err = stream(ctx, t, t.Render(input), func(s string) { onDelta(model.Delta{Text: s}) }); err != nil {
		return resp, err
	}
	for i, c := range t.ToolCalls {
		resp.ToolCalls = append(resp.ToolCalls, model.ToolCall{
			ID: fmt.Sprintf("call_%d_%d", req.Turn, i), Name: c.Name, Arguments: withOutputRef(c.Arguments, req.Messages)})
	}
	if len(resp.ToolCalls) > 0 {
		resp.FinishReason = "tool_calls"
	}
	n := len(resp.Text) / 4
	resp.Usage = model.Usage{PromptTokens: promptTokens(req), CompletionTokens: n, TotalTokens: promptTokens(req) + n}
	return resp, nil
}

// stream delivers text in chunks, pausing t.Delay before each. It returns
// what was delivered and ctx's error when ctx ended first.
func stream(ctx context.Context, t profile.Turn, text string, emit func(string)) (string, error) {
	size := t.ChunkChars
	if size <= 0 {
		size = defaultChunk
	}
	sent := 0
	for sent < len(text) {
		if t.Delay > 0 {
			select {
			case <-ctx.Done():
				return text[:sent], ctx.Err()
			case <-time.After(t.Delay):
			}
		} else if ctx.Err() != nil {
			return text[:sent], ctx.Err()
		}
		end := cut(text, sent+size)
		emit(text[sent:end])
		sent = end
	}
	return text, nil
}

func scriptedError(code string) error {
	switch code {
	case "rate_limited":
		return &model.Error{Status: 429, Code: code, Message: "scripted rate limit", Retryable: true}
	case "server_error":
		return &model.Error{Status: 500, Code: code, Message: "scripted server error", Retryable: true}
	case "context_overflow":
		return &model.Error{Status: 400, Code: "context_length_exceeded", Message: "scripted context overflow", Overflow: true}
	}
	return &model.Error{Status: 400, Code: code, Message: "scripted bad request"}
}

func lastUser(msgs []model.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == model.RoleUser {
			return msgs[i].Content
		}
	}
	return ""
}

// promptTokens is a rough count (4 bytes a token), enough for usage figures.
func promptTokens(req model.Request) int {
	n := 0
	for _, m := range req.Messages {
		n += len(m.Content) + len(m.Role)
		for _, c := range m.ToolCalls {
			n += len(c.Name) + len(c.Arguments)
		}
	}
	return n / 4
}

// cut returns n moved forward to a UTF-8 boundary of s (or len(s)).
func cut(s string, n int) int {
	if n >= len(s) {
		return len(s)
	}
	for n < len(s) && s[n]&0xC0 == 0x80 {
		n++
	}
	return n
}

var _ model.Provider = (*Provider)(nil)

// OutputRefPlaceholder in a scripted call's arguments stands for the path of
// the latest offloaded tool output the request shows (the "stored at PATH"
// of its preview), so a script can page through an output with
// read_file_part as a model would.
const OutputRefPlaceholder = "{{outputRef}}"

var storedAt = regexp.MustCompile(`is stored at (\S+?);`)

func withOutputRef(args string, msgs []model.Message) string {
	if !strings.Contains(args, OutputRefPlaceholder) {
		return args
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		if m := storedAt.FindStringSubmatch(msgs[i].Content); m != nil {
			return strings.ReplaceAll(args, OutputRefPlaceholder, m[1])
		}
	}
	return args
}
