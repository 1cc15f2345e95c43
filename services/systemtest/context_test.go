package systemtest_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/services/engine/agentloop"
	"github.com/xbot-runtime/xbot/services/engine/model"
	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/engine/tools"
	"github.com/xbot-runtime/xbot/services/stack"
)

// Compaction triggers and large-output offload, end to end.

// compactions returns the run's compaction artifacts.
func compactions(t *testing.T, st *stack.Stack, runID string) []map[string]any {
	t.Helper()
	return itemEvents(t, st, runID, "runtime.context.compacted")
}

// turnsOf drops the compaction calls from a model's requests.
func turnsOf(reqs []model.Request) (turns, summarising []model.Request) {
	for _, r := range reqs {
		if r.Purpose == model.PurposeCompaction {
			summarising = append(summarising, r)
		} else {
			turns = append(turns, r)
		}
	}
	return turns, summarising
}

func hasMessage(msgs []model.Message, part string) bool {
	for _, m := range msgs {
		if strings.Contains(m.Content, part) {
			return true
		}
	}
	return false
}

func checkArtifact(t *testing.T, art map[string]any, trigger string) {
	t.Helper()
	stats := art["tokenStats"].(map[string]any)
	if art["triggerReason"] != trigger || art["cutoffEventSeq"].(float64) < 1 ||
		stats["afterTokens"].(float64) >= stats["beforeTokens"].(float64) {
		t.Errorf("artifact %v, want trigger %s and fewer tokens after", art, trigger)
	}
	if !strings.HasPrefix(art["artifactId"].(string), "cmp_") || art["summary"] == nil {
		t.Errorf("artifact %v lacks its id or summary", art)
	}
}

func TestCompactionBeforeAModelRequestOverTheThreshold(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a long answer that fills the context window quickly. ", 20) // ~1 KB
	agent := profile.Profile{ID: "chat", Model: profile.ModelScripted, Script: []profile.Turn{{Text: long}},
		Context: profile.Context{Window: 400, CompactAt: 0.5}}
	e, st, reqs := agentEnv(t, agent)
	code, body := call(t, st, "POST", "/v1/runs", token, map[string]any{"agentId": "chat", "input": map[string]any{"content": "first"},
		"platformSessionId": "sess-compact"}, "Idempotency-Key", "cmp-before")
	if code != 202 {
		t.Fatalf("create: HTTP %d %v", code, body)
	}
	first := body["runId"].(string)
	waitStatus(t, st, first, "completed", 10*time.Second)
	code, body = call(t, st, "POST", "/v1/runs/"+first+"/inputs", token,
		map[string]any{"intent": "follow_up", "content": "second"}, "Idempotency-Key", "cmp-before-next")
	if code != 202 {
		t.Fatalf("follow-up: HTTP %d %v", code, body)
	}
	next := body["createdRunId"].(string)
	waitStatus(t, st, next, "completed", 10*time.Second)
	if n := len(compactions(t, st, first)); n != 0 {
		t.Errorf("the first run compacted %d times; its context was small", n)
	}
	arts := compactions(t, st, next)
	if len(arts) != 1 {
		t.Fatalf("%d compactions in the follow-up, want 1", len(arts))
	}
	checkArtifact(t, arts[0], "before_model_request_threshold")
	turns, summarising := turnsOf(reqs.of("chat"))
	if len(summarising) != 1 || len(turns) != 2 {
		t.Fatalf("%d turns and %d summarising calls, want 2 and 1", len(turns), len(summarising))
	}
	if msgs := turns[1].Messages; hasMessage(msgs, long) || !hasMessage(msgs, "Summary of the conversation") || !hasMessage(msgs, "second") {
		t.Errorf("the follow-up's request after compaction: %+v", msgs)
	}
	e.invariants(st)
}

func TestCompactionAfterALargeToolResult(t *testing.T) {
	t.Parallel()
	specs, err := tools.Builtin(tools.Options{}).Specs([]string{"shell", tools.ReadFilePartName})
	if err != nil {
		t.Fatal(err)
	}
	threshold := agentloop.EstimateTokens(nil, specs) + 150
	agent := profile.Profile{ID: "lister", Model: profile.ModelScripted, Tools: []string{"shell"},
		Context: profile.Context{Window: 2 * threshold, CompactAt: 0.5}, Script: []profile.Turn{
			{ToolCalls: call1("shell", `{"command":"seq 1 400"}`)}, // ~1.5 KB: ~400 tokens
			{Text: "Counted."},
		}}
	e, st, reqs := agentEnv(t, agent)
	runID := create(t, st, "lister", "count", "cmp-post")["runId"].(string)
	waitStatus(t, st, runID, "completed", 10*time.Second)
	arts := compactions(t, st, runID)
	if len(arts) != 1 {
		t.Fatalf("%d compactions, want 1", len(arts))
	}
	checkArtifact(t, arts[0], "post_tool_result_threshold")
	turns, _ := turnsOf(reqs.of("lister"))
	if len(turns) != 2 || hasMessage(turns[1].Messages, "\n399\n") || !hasMessage(turns[1].Messages, "Summary of the conversation") {
		t.Errorf("the request after the compaction still holds the listing, or lacks the summary: %+v", turns[len(turns)-1].Messages)
	}
	e.invariants(st)
}

func TestContextOverflowIsRecoveredByCompactingAndRetryingOnce(t *testing.T) {
	t.Parallel()
	agent := profile.Profile{ID: "big", Model: profile.ModelScripted, Script: []profile.Turn{
		{Error: "context_overflow", ErrorAttempts: 1, Text: "Recovered."},
	}}
	e, st, reqs := agentEnv(t, agent)
	runID := create(t, st, "big", "summarise the repo", "cmp-overflow")["runId"].(string)
	run := waitStatus(t, st, runID, "completed", 10*time.Second)
	if run["output"] != nil && run["output"] != "Recovered." {
		t.Errorf("output %v", run["output"])
	}
	arts := compactions(t, st, runID)
	if len(arts) != 1 || arts[0]["triggerReason"] != "context_overflow_recovery" {
		t.Fatalf("compactions %v, want one context_overflow_recovery", arts)
	}
	turns, summarising := turnsOf(reqs.of("big"))
	if len(turns) != 2 || turns[0].Attempt != 0 || turns[1].Attempt != 1 || len(summarising) != 1 {
		t.Errorf("model calls: %d turns (attempts %v), %d summarising; want the turn tried twice around one compaction",
			len(turns), attempts(turns), len(summarising))
	}
	e.invariants(st)

	// A model that overflows again after the compaction fails the run: one retry only.
	stubborn := profile.Profile{ID: "stubborn", Model: profile.ModelScripted, Script: []profile.Turn{{Error: "context_overflow"}}}
	e2, st2, _ := agentEnv(t, stubborn)
	runID = create(t, st2, "stubborn", "go", "cmp-overflow-2")["runId"].(string)
	failed := waitStatus(t, st2, runID, "failed", 10*time.Second)
	if failed["errorCode"] != "model_error" || len(compactions(t, st2, runID)) != 1 {
		t.Errorf("run %v, want failed model_error after one compaction", failed)
	}
	e2.invariants(st2)
}

func attempts(reqs []model.Request) []int {
	var out []int
	for _, r := range reqs {
		out = append(out, r.Attempt)
	}
	return out
}

func TestManualCompactionAppliesAtTheNextModelRequest(t *testing.T) {
	t.Parallel()
	agent := profile.Profile{ID: "asker", Model: profile.ModelScripted, Tools: []string{"ask_user"}, Script: []profile.Turn{
		{ToolCalls: call1("ask_user", `{"question":"Which colour?"}`)},
		{Text: "Painting it."},
	}}
	e, st, reqs := agentEnv(t, agent)
	runID := create(t, st, "asker", "paint the door", "cmp-manual")["runId"].(string)
	waitStatus(t, st, runID, "paused", 10*time.Second)
	code, body := call(t, st, "POST", "/v1/runs/"+runID+"/compact", token, map[string]any{"reason": "keep it short"},
		"Idempotency-Key", "cmp-manual-c")
	if code != 202 || body["outcome"] != "accepted" {
		t.Fatalf("compaction: HTTP %d %v", code, body)
	}
	code, body = call(t, st, "POST", "/v1/runs/"+runID+"/inputs", token,
		map[string]any{"intent": "clarification", "content": "blue"}, "Idempotency-Key", "cmp-manual-a")
	if code != 202 || body["outcome"] != "accepted" {
		t.Fatalf("clarification: HTTP %d %v", code, body)
	}
	waitStatus(t, st, runID, "completed", 10*time.Second)
	arts := compactions(t, st, runID)
	if len(arts) != 1 || arts[0]["triggerReason"] != "manual_compact" {
		t.Fatalf("compactions %v, want one manual_compact", arts)
	}
	var compacted, applied string
	for _, ev := range listEvents(t, st, runID) {
		switch ev["type"] {
		case "runtime.context.compacted":
			compacted, _ = ev["commandId"].(string)
		case "runtime.command.applied":
			if ev["payload"].(map[string]any)["commandType"] == "RequestCompaction" {
				applied, _ = ev["commandId"].(string)
			}
		}
	}
	if compacted == "" || compacted != applied {
		t.Errorf("compaction commandId %q, applied %q: want the artifact and the outcome to name the command", compacted, applied)
	}
	turns, _ := turnsOf(reqs.of("asker"))
	if last := turns[len(turns)-1].Messages; !hasMessage(last, "Summary of the conversation") || !hasMessage(last, "paint the door") {
		t.Errorf("request after the compaction: %+v", last)
	}
	e.invariants(st)
}

func TestLargeToolOutputIsOffloadedAndReadInParts(t *testing.T) {
	t.Parallel()
	agent := profile.Profile{ID: "reader", Model: profile.ModelScripted, Tools: []string{"shell"}, Script: []profile.Turn{
		{ToolCalls: call1("shell", `{"command":"seq 1 20000"}`)},
		{ToolCalls: call1(tools.ReadFilePartName, `{"path":"{{outputRef}}","offset":0,"length":60}`)},
		{Text: "Read it."},
	}}
	e, st, reqs := agentEnv(t, agent)
	runID := create(t, st, "reader", "count far", "offload-1")["runId"].(string)
	waitStatus(t, st, runID, "completed", 20*time.Second)
	done := itemEvents(t, st, runID, "runtime.item.completed")
	var shell, part map[string]any
	for _, p := range done {
		switch p["itemType"] {
		case "command_execution":
			shell = p
		case "tool_call":
			part = p
		}
	}
	if shell == nil || part == nil {
		t.Fatalf("completed items %v", done)
	}
	ref, _ := shell["data"].(map[string]any)["outputRef"].(map[string]any)
	full := 0
	for i := 1; i <= 20000; i++ {
		full += len(fmt.Sprint(i)) + 1
	}
	if ref == nil || int(ref["bytes"].(float64)) < full || !strings.Contains(ref["path"].(string), "/output/") {
		t.Fatalf("outputRef %v, want the %d bytes stored in the run's output directory", ref, full)
	}
	if n := len(shell["content"].(string)); n > profile.DefaultOffloadBytes {
		t.Errorf("the model's preview is %d bytes, over the %d offload threshold", n, profile.DefaultOffloadBytes)
	}
	text := part["content"].(string)
	if !strings.HasPrefix(text, "bytes 0-") || !strings.Contains(text, "1\n2\n3\n") {
		t.Errorf("read_file_part returned %q", text)
	}
	turns, _ := turnsOf(reqs.of("reader"))
	if got := lastToolResult(turns[len(turns)-1].Messages); got != text {
		t.Errorf("the model got %q", got)
	}
	e.invariants(st)
}
