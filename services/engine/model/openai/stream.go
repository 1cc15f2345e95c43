package openai

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/xbot-runtime/xbot/services/engine/model"
)

// chunk is one chat.completion.chunk. Fields not listed are ignored.
type chunk struct {
	Model   string          `json:"model"`
	Choices []choice        `json:"choices"`
	Usage   *wireUsage      `json:"usage"`
	Error   json.RawMessage `json:"error"`
}

type choice struct {
	Index        int     `json:"index"`
	Delta        delta   `json:"delta"`
	FinishReason *string `json:"finish_reason"`
}

type delta struct {
	Content string `json:"content"`
	// ReasoningContent is DeepSeek's and Qwen's name; Reasoning is vLLM's,
	// Ollama's, Groq's and OpenRouter's. A server sending both sends the same
	// text twice, so the first non-empty one wins.
	ReasoningContent string          `json:"reasoning_content"`
	Reasoning        string          `json:"reasoning"`
	ToolCalls        []toolCallDelta `json:"tool_calls"`
}

type toolCallDelta struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name string `json:"name"`
		// Arguments is a JSON string; a few gateways send an object instead.
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

type wireUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// maxResponseBytes bounds what one response may hold in this process: its
// text, reasoning and tool calls (names and arguments) together. A server
// that streams without end (a model looping until a token limit the request
// did not set, a broken gateway) fails the call instead of taking the
// executor's memory. 64 MiB is four times a run's default event budget.
const maxResponseBytes = 64 << 20

// accumulator assembles a Response from chunks.
type accumulator struct {
	res       model.Response
	text      strings.Builder
	reasoning strings.Builder
	calls     toolCalls
	finished  bool  // a finish_reason arrived
	bytes     int64 // of text, reasoning and tool calls so far
}

// add folds c in and returns the text it carried for onDelta.
func (a *accumulator) add(c chunk) model.Delta {
	if c.Model != "" {
		a.res.Model = c.Model
	}
	if u := c.Usage; u != nil && (u.PromptTokens != 0 || u.CompletionTokens != 0 || u.TotalTokens != 0) {
		a.res.Usage = model.Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.TotalTokens}
		if a.res.Usage.TotalTokens == 0 {
			a.res.Usage.TotalTokens = u.PromptTokens + u.CompletionTokens
		}
	}
	var d model.Delta
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue // only one completion is requested; ignore any other
		}
		d.Text += ch.Delta.Content
		d.Reasoning += cmpOr(ch.Delta.ReasoningContent, ch.Delta.Reasoning)
		for _, tc := range ch.Delta.ToolCalls {
			a.bytes += int64(a.calls.add(tc))
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			a.res.FinishReason = *ch.FinishReason
			a.finished = true
		}
	}
	a.text.WriteString(d.Text)
	a.reasoning.WriteString(d.Reasoning)
	a.bytes += int64(len(d.Text) + len(d.Reasoning))
	return d
}

// tooLarge reports whether the response has passed maxResponseBytes.
func (a *accumulator) tooLarge() bool { return a.bytes > maxResponseBytes }

// result returns the response assembled so far.
func (a *accumulator) result() model.Response {
	r := a.res
	r.Text = a.text.String()
	r.Reasoning = a.reasoning.String()
	r.ToolCalls = a.calls.result()
	return r
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// toolCalls merges tool-call deltas; add returns the bytes a delta brought. A call is keyed by its index: id and
// name come from the first delta that has them (later empty or repeated ones
// are ignored) and arguments are concatenated. A delta with a new id at an
// index already holding another id starts a new call (gateways that reuse
// indexes); a delta without an index continues the latest call. Calls keep
// the order in which they first appeared, whatever their indexes.
type toolCalls struct {
	calls   []model.ToolCall
	byIndex map[int]int
}

func (t *toolCalls) add(tc toolCallDelta) (added int) {
	pos, ok := -1, false
	if tc.Index != nil {
		pos, ok = t.byIndex[*tc.Index]
	} else if len(t.calls) > 0 {
		pos, ok = len(t.calls)-1, true
	}
	if ok && tc.ID != "" && t.calls[pos].ID != "" && tc.ID != t.calls[pos].ID {
		ok = false
	}
	if !ok {
		t.calls = append(t.calls, model.ToolCall{})
		pos = len(t.calls) - 1
		if tc.Index != nil {
			if t.byIndex == nil {
				t.byIndex = map[int]int{}
			}
			t.byIndex[*tc.Index] = pos
		}
	}
	c := &t.calls[pos]
	c.ID = cmpOr(c.ID, tc.ID)
	c.Name = cmpOr(c.Name, tc.Function.Name)
	args := argumentText(tc.Function.Arguments)
	c.Arguments += args
	return len(tc.ID) + len(tc.Function.Name) + len(args)
}

// argumentText returns arguments sent as a JSON string, or the raw JSON of an
// object sent instead.
func argumentText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// result drops empty calls and names calls the server left without an id.
func (t *toolCalls) result() []model.ToolCall {
	var out []model.ToolCall
	for i, c := range t.calls {
		if c.Name == "" && c.Arguments == "" {
			continue
		}
		if c.ID == "" {
			c.ID = "call_" + strconv.Itoa(i)
		}
		out = append(out, c)
	}
	return out
}
