package openai_test

import (
	"context"
	"net/http"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/services/engine/model"
)

// Each test here replays a recorded stream; see testdata/PROVENANCE.md.

func TestStreamPlainText(t *testing.T) {
	t.Parallel()
	srv := sseServer(t, fixture(t, "openai-text.sse"))
	p, _ := newProvider(t, srv.URL, nil)
	res, deltas, err := call(t, p)
	if err != nil {
		t.Fatal(err)
	}
	want := "I'm unable to provide real-time weather updates. To get the current weather in San Francisco, " +
		"I recommend checking a reliable weather website or a weather app."
	if res.Text != want {
		t.Errorf("text = %q, want %q", res.Text, want)
	}
	if text, _ := joinDeltas(deltas); text != want || len(deltas) < 10 {
		t.Errorf("%d deltas joined = %q", len(deltas), text)
	}
	checkEnd(t, res, "stop", "gpt-4o-2024-08-06", model.Usage{PromptTokens: 14, CompletionTokens: 30, TotalTokens: 44})
}

func TestStreamParallelToolCalls(t *testing.T) {
	t.Parallel()
	for _, piece := range []int{0, 1, 7, 100} { // also split the bytes at arbitrary points
		srv := newServer(t, func(w http.ResponseWriter, _ *http.Request, _ int) {
			writeSSE(w, fixture(t, "openai-parallel-tool-calls.sse"), piece)
		})
		p, _ := newProvider(t, srv.URL, nil)
		res, deltas, err := call(t, p)
		if err != nil {
			t.Fatal(err)
		}
		want := []model.ToolCall{
			{ID: "call_JMW1whyEaYG438VE1OIflxA2", Name: "GetWeatherArgs", Arguments: `{"city": "Edinburgh", "country": "GB", "units": "c"}`},
			{ID: "call_DNYTawLBoN8fj3KN6qU9N1Ou", Name: "get_stock_price", Arguments: `{"ticker": "AAPL", "exchange": "NASDAQ"}`},
		}
		if !reflect.DeepEqual(res.ToolCalls, want) {
			t.Errorf("piece %d: tool calls = %#v", piece, res.ToolCalls)
		}
		if len(deltas) != 0 || res.Text != "" {
			t.Errorf("piece %d: text %q, %d deltas; want none", piece, res.Text, len(deltas))
		}
		checkEnd(t, res, "tool_calls", "gpt-4o-2024-08-06", model.Usage{PromptTokens: 149, CompletionTokens: 60, TotalTokens: 209})
	}
}

func TestStreamReasoningContent(t *testing.T) {
	t.Parallel()
	srv := sseServer(t, frame(chunkLines(t, "deepseek-reasoning.chunks.txt"), true))
	p, _ := newProvider(t, srv.URL, nil)
	res, deltas, err := call(t, p)
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != `The word "strawberry" contains three "r"s.` {
		t.Errorf("text = %q", res.Text)
	}
	if !strings.HasPrefix(res.Reasoning, `We need to count the number of the letter "r"`) ||
		!strings.HasSuffix(res.Reasoning, "Thus, the answer is 3.") || len(res.Reasoning) != 606 {
		t.Errorf("reasoning (%d bytes) = %q", len(res.Reasoning), res.Reasoning)
	}
	text, reasoning := joinDeltas(deltas)
	if text != res.Text || reasoning != res.Reasoning {
		t.Errorf("deltas joined: text %q, reasoning %d bytes", text, len(reasoning))
	}
	lastReasoning, firstText := -1, len(deltas)
	for i, d := range deltas {
		if d.Reasoning != "" {
			lastReasoning = i
		}
		if d.Text != "" && i < firstText {
			firstText = i
		}
	}
	if lastReasoning > firstText {
		t.Errorf("reasoning delta %d after text delta %d: order lost", lastReasoning, firstText)
	}
	checkEnd(t, res, "stop", "deepseek-reasoner", model.Usage{PromptTokens: 18, CompletionTokens: 219, TotalTokens: 237})
}

// The Cerebras recording holds two responses (a two-step run); the first
// one is replayed: reasoning in delta.reasoning, then one whole tool call.
func TestStreamReasoningFieldAndWholeToolCall(t *testing.T) {
	t.Parallel()
	lines := chunkLines(t, "cerebras-reasoning-tool-call.chunks.txt")
	firstID := lines[0][:strings.Index(lines[0], `","choices"`)]
	var first []string
	for _, l := range lines {
		if strings.HasPrefix(l, firstID) {
			first = append(first, l)
		}
	}
	srv := sseServer(t, frame(first, true))
	p, _ := newProvider(t, srv.URL, nil)
	res, deltas, err := call(t, p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res.Reasoning, `The user is asking about a "magic number".`) ||
		!strings.HasSuffix(res.Reasoning, "I should call this function to get the magic number.") {
		t.Errorf("reasoning = %q", res.Reasoning)
	}
	if _, r := joinDeltas(deltas); r != res.Reasoning {
		t.Errorf("reasoning deltas joined = %q", r)
	}
	want := []model.ToolCall{{ID: "bbd2b9d98", Name: "nonUsefulTool", Arguments: "{}"}}
	if !reflect.DeepEqual(res.ToolCalls, want) {
		t.Errorf("tool calls = %#v", res.ToolCalls)
	}
	checkEnd(t, res, "tool_calls", "zai-glm-4.7", model.Usage{PromptTokens: 322, CompletionTokens: 104, TotalTokens: 426})
}

// Qwen (DashScope compatible mode) repeats the call with an empty id and
// sends a trailing empty delta; the usage chunk has no choices.
func TestStreamQwenToolCall(t *testing.T) {
	t.Parallel()
	srv := sseServer(t, frame(chunkLines(t, "alibaba-qwen-tool-call.chunks.txt"), true))
	p, _ := newProvider(t, srv.URL, nil)
	res, _, err := call(t, p)
	if err != nil {
		t.Fatal(err)
	}
	want := []model.ToolCall{{ID: "call_eee11723464a4b9eb8cee71d", Name: "weather", Arguments: `{"location": "San Francisco"}`}}
	if !reflect.DeepEqual(res.ToolCalls, want) {
		t.Errorf("tool calls = %#v", res.ToolCalls)
	}
	checkEnd(t, res, "tool_calls", "qwen3-max", model.Usage{PromptTokens: 295, CompletionTokens: 22, TotalTokens: 317})
}

// An Anthropic-backed gateway numbers its only tool call 1, after text.
func TestStreamToolCallIndexNotZero(t *testing.T) {
	t.Parallel()
	srv := sseServer(t, fixture(t, "anthropic-fallback-tool-call.sse"))
	p, _ := newProvider(t, srv.URL, nil)
	res, _, err := call(t, p)
	if err != nil {
		t.Fatal(err)
	}
	want := []model.ToolCall{{ID: "toolu_sanitized", Name: "read_file", Arguments: `{"path": "a.txt"}`}}
	if res.Text != "Reading it." || !reflect.DeepEqual(res.ToolCalls, want) {
		t.Errorf("text %q, tool calls %#v", res.Text, res.ToolCalls)
	}
	checkEnd(t, res, "tool_calls", "claude-haiku-4-5-20251001", model.Usage{})
}

// The recorded text stream, reframed the ways the SSE spec allows: CRLF line
// endings, keep-alive comments (OpenRouter sends ": OPENROUTER PROCESSING"),
// each JSON object split over two data lines, and no space after "data:".
func TestStreamSSEFraming(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString(": OPENROUTER PROCESSING\r\n\r\n")
	for _, ev := range sseEvents(fixture(t, "openai-text.sse")) {
		data := strings.TrimSpace(strings.TrimPrefix(ev, "data: "))
		if head, tail, ok := strings.Cut(data, `,"choices"`); ok {
			data = head + "\r\ndata:" + `,"choices"` + tail
		}
		b.WriteString(": ping\r\ndata:" + data + "\r\n\r\n")
	}
	srv := sseServer(t, []byte(b.String()))
	p, _ := newProvider(t, srv.URL, nil)
	res, _, err := call(t, p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res.Text, "I'm unable to provide real-time weather updates.") || res.Usage.TotalTokens != 44 {
		t.Errorf("text %q usage %+v", res.Text, res.Usage)
	}
}

// A server that closes the stream after finish_reason without [DONE] still
// gave a complete answer.
func TestStreamWithoutDone(t *testing.T) {
	t.Parallel()
	srv := sseServer(t, frame(chunkLines(t, "alibaba-qwen-tool-call.chunks.txt"), false))
	p, _ := newProvider(t, srv.URL, nil)
	res, _, err := call(t, p)
	if err != nil || len(res.ToolCalls) != 1 {
		t.Fatalf("res %+v err %v", res, err)
	}
}

func checkEnd(t *testing.T, res model.Response, finish, modelName string, usage model.Usage) {
	t.Helper()
	if res.FinishReason != finish || res.Model != modelName || res.Usage != usage {
		t.Errorf("finish %q model %q usage %+v; want %q %q %+v", res.FinishReason, res.Model, res.Usage, finish, modelName, usage)
	}
}

// endless streams events built by ev until the client goes, and counts the
// bytes it got out.
func endless(t *testing.T, ev func(i int) string) (*server, *atomic.Int64) {
	t.Helper()
	var sent atomic.Int64
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		for i := 0; r.Context().Err() == nil; i++ {
			n, err := w.Write([]byte(ev(i)))
			sent.Add(int64(n))
			if err != nil || rc.Flush() != nil {
				return
			}
		}
	})
	return srv, &sent
}

// TestStreamWithoutEndIsCutOff: a server that streams a tool call's
// arguments (or text) without end fails the call once the response passes
// 64 MiB, not retried; what the server sent is that and what the sockets
// buffer. So does one event whose data lines never end, at 16 MiB.
func TestStreamWithoutEndIsCutOff(t *testing.T) {
	t.Parallel()
	piece := strings.Repeat("x", 1<<20)
	for name, ev := range map[string]func(int) string{
		"arguments": func(i int) string {
			name := ""
			if i == 0 {
				name = `"id":"call_1","function":{"name":"shell","arguments":"{\"command\":\""}`
			} else {
				name = `"function":{"arguments":"` + piece + `"}`
			}
			return `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,` + name + `}]}}]}` + "\n\n"
		},
		"text": func(int) string {
			return `data: {"choices":[{"index":0,"delta":{"content":"` + piece + `"}}]}` + "\n\n"
		},
		"one event": func(int) string { return "data: " + piece + "\n" },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv, sent := endless(t, ev)
			p, sl := newProvider(t, srv.URL, nil)
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute) // an unbounded read ends here
			defer cancel()
			_, _, err := callCtx(ctx, p, nil)
			if err == nil {
				t.Fatal("an endless response ended well")
			}
			attempts := srv.attempts.Load()
			if me := asModelError(t, err); me.Code != "response_too_large" || me.Retryable || attempts != 1 {
				t.Errorf("error %+v after %d attempts (%v waited), want response_too_large, not retried", me, attempts, sl.got())
			}
			if n := sent.Load(); n > 100<<20 {
				t.Errorf("the server got %d MiB out, want the bound and socket buffers", n>>20)
			}
		})
	}
}
