package systemtest_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/services/engine/compute/local"
	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/stack"
)

// TestDemoAgentOnAConfiguredModel runs the built-in demo agent against an
// OpenAI-compatible server that replays recorded OpenAI streams: first a
// response with two parallel tool calls (to a tool we do not have), then a
// text answer. The run goes through the real provider, the tools and the
// sandbox, and the provider sees our tools, key and model.
func TestDemoAgentOnAConfiguredModel(t *testing.T) {
	t.Parallel()
	replies := []string{"openai-parallel-tool-calls.sse", "openai-text.sse"}
	var (
		mu   sync.Mutex
		seen []map[string]any
		auth []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req map[string]any
		_ = json.Unmarshal(body, &req)
		mu.Lock()
		n := len(seen)
		seen, auth = append(seen, req), append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		stream, err := os.ReadFile("../engine/model/openai/testdata/" + replies[min(n, len(replies)-1)])
		if err != nil {
			t.Error(err)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(stream)
	}))
	defer srv.Close()

	e := newEnv(t)
	demo := profile.DemoLLM()
	demo.Limits.ToolConcurrency = 1 // a deterministic event order for the assertion below
	cat, err := profile.NewCatalog(demo)
	if err != nil {
		t.Fatal(err)
	}
	e.cat = cat
	comp, err := local.New(local.Config{Dir: t.TempDir(), Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	st := e.startWith("all", func(o *stack.Options) {
		o.Compute, o.LLM = comp, stack.LLM{BaseURL: srv.URL + "/v1", APIKey: "sk-test-not-a-real-key", Model: "gpt-test"}
	})
	runID := create(t, st, "demo", "What is the weather in SF and NYC?", "llm-1")["runId"].(string)
	run := waitStatus(t, st, runID, "completed", 15*time.Second)
	if out, _ := run["output"].(string); out != "" && !strings.HasPrefix(out, "I'm unable to provide real-time weather") {
		t.Errorf("output %q", out)
	}
	assertSequence(t, st, runID,
		"runtime.run.accepted", "runtime.capability.snapshot_frozen", "runtime.run.started",
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
	if seen[0]["model"] != "gpt-test" || auth[0] != "Bearer sk-test-not-a-real-key" || seen[0]["stream"] != true {
		t.Errorf("first request model %v auth %q stream %v", seen[0]["model"], auth[0], seen[0]["stream"])
	}
	tools, _ := seen[0]["tools"].([]any)
	if len(tools) != len(profile.DemoTools)+1 { // + read_file_part, added to every profile with tools
		t.Errorf("the model was offered %d tools, want the %d built-ins and read_file_part", len(tools), len(profile.DemoTools))
	}
	msgs, _ := seen[1]["messages"].([]any)
	var toolResults int
	for _, m := range msgs {
		if m.(map[string]any)["role"] == "tool" {
			toolResults++
			if !strings.Contains(m.(map[string]any)["content"].(string), "unknown_tool") {
				t.Errorf("tool result %v, want an unknown_tool error", m)
			}
		}
	}
	if toolResults != 2 {
		t.Errorf("second request carries %d tool results, want 2", toolResults)
	}
	// The key never reaches the log.
	for _, ev := range listEvents(t, st, runID) {
		if raw, _ := json.Marshal(ev); strings.Contains(string(raw), "sk-test-not-a-real-key") {
			t.Fatalf("the API key is in event %v", ev["type"])
		}
	}
}
