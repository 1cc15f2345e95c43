package systemtest_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/stack"
)

// chatRequest is what the tests read of an OpenAI chat completion request.
type chatRequest struct {
	Model    string            `json:"model"`
	Stream   bool              `json:"stream"`
	Tools    []json.RawMessage `json:"tools"`
	Messages []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"messages"`
}

// TestDemoAgentOnAConfiguredModel runs the built-in demo agent against an
// OpenAI-compatible server that replays recorded OpenAI streams: first a
// response with two parallel tool calls (to a tool we do not have), then a
// text answer. The run goes through the real provider, the tools and the
// sandbox, and the provider sees our tools, key and model.
func TestDemoAgentOnAConfiguredModel(t *testing.T) {
	t.Parallel()
	var (
		mu   sync.Mutex
		seen []chatRequest
		auth []string
	)
	srv := replayServer(t, func(r *http.Request, body []byte) {
		var req chatRequest
		_ = json.Unmarshal(body, &req)
		mu.Lock()
		defer mu.Unlock()
		seen, auth = append(seen, req), append(auth, r.Header.Get("Authorization"))
	}, "openai-parallel-tool-calls.sse", "openai-text.sse")

	demo := profile.DemoLLM()
	demo.Limits.ToolConcurrency = 1 // a deterministic event order for the assertion below
	st := llmEnv(t, stack.LLM{BaseURL: srv.URL + "/v1", APIKey: "sk-test-not-a-real-key", Model: "gpt-test"}, nil, demo)
	runID := runUntil(t, st, "demo", "What is the weather in SF and NYC?", "llm-1", "completed", 15*time.Second)
	if out := completedOutput(t, st, runID); out != "" && !strings.HasPrefix(out, "I'm unable to provide real-time weather") {
		t.Errorf("output %q", out)
	}
	assertLog(t, st, runID,
		"runtime.item.started:assistant_message", "runtime.item.completed:assistant_message",
		"runtime.item.started:tool_call", "runtime.item.failed:tool_call",
		"runtime.item.started:tool_call", "runtime.item.failed:tool_call",
		"runtime.item.started:assistant_message", "delta+", "runtime.item.completed:assistant_message",
		"runtime.run.completed")
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 {
		t.Fatalf("%d model requests, want 2", len(seen))
	}
	if seen[0].Model != "gpt-test" || auth[0] != "Bearer sk-test-not-a-real-key" || !seen[0].Stream {
		t.Errorf("first request model %q auth %q stream %v", seen[0].Model, auth[0], seen[0].Stream)
	}
	if tools := seen[0].Tools; len(tools) != len(profile.DemoTools)+1 { // + read_file_part, added to every profile with tools
		t.Errorf("the model was offered %d tools, want the %d built-ins and read_file_part", len(tools), len(profile.DemoTools))
	}
	var toolResults int
	for _, m := range seen[1].Messages {
		if m.Role == "tool" {
			toolResults++
			if !strings.Contains(m.Content, "unknown_tool") {
				t.Errorf("tool result %+v, want an unknown_tool error", m)
			}
		}
	}
	if toolResults != 2 {
		t.Errorf("second request carries %d tool results, want 2", toolResults)
	}
	// The key never reaches the log.
	for _, ev := range listEvents(t, st, runID) {
		if raw, _ := json.Marshal(ev); strings.Contains(string(raw), "sk-test-not-a-real-key") {
			t.Fatalf("the API key is in event %s", ev.Type)
		}
	}
}
