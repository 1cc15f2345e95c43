package systemtest_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/api/client"
	"github.com/xbot-runtime/xbot/services/engine/agentloop"
	"github.com/xbot-runtime/xbot/services/engine/model"
	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/engine/tools"
	"github.com/xbot-runtime/xbot/services/stack"
)

// Compaction triggers and large-output offload, end to end.

// compactions returns the run's compaction artifacts.
func compactions(t *testing.T, st *stack.Stack, runID string) []events.ContextCompactedPayload {
	t.Helper()
	return payloads[events.ContextCompactedPayload](t, st, runID)
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

func checkArtifact(t *testing.T, art events.ContextCompactedPayload, trigger string) {
	t.Helper()
	if art.TriggerReason != trigger || art.CutoffEventSeq < 1 || art.TokenStats.AfterTokens >= art.TokenStats.BeforeTokens {
		t.Errorf("artifact %+v, want trigger %s and fewer tokens after", art, trigger)
	}
	if !strings.HasPrefix(art.ArtifactID, "cmp_") || art.Summary.UserGoal == "" && art.Summary.Notes == "" {
		t.Errorf("artifact %+v lacks its id or summary", art)
	}
}

func TestCompactionBeforeAModelRequestOverTheThreshold(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a long answer that fills the context window quickly. ", 20) // ~1 KB
	agent := profile.Profile{ID: "chat", Model: profile.ModelScripted, Script: []profile.Turn{{Text: long}},
		Context: profile.Context{Window: 400, CompactAt: 0.5}}
	e, st, reqs := agentEnv(t, agent)
	first := createRun(t, apiOf(t, st), client.CreateRunRequest{AgentID: "chat", Input: client.UserInput{Content: "first"},
		PlatformSessionID: "sess-compact"}, "cmp-before").RunID
	waitStatus(t, st, first, "completed", 10*time.Second)
	next := input(t, st, first, "follow_up", "second", "cmp-before-next").CreatedRunID
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
	runID := runUntil(t, st, "lister", "count", "cmp-post", "completed", 10*time.Second)
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
	runID := runUntil(t, st, "big", "summarise the repo", "cmp-overflow", "completed", 10*time.Second)
	if out := completedOutput(t, st, runID); out != "" && out != "Recovered." {
		t.Errorf("output %q", out)
	}
	arts := compactions(t, st, runID)
	if len(arts) != 1 || arts[0].TriggerReason != events.CompactOverflowRecovery {
		t.Fatalf("compactions %+v, want one context_overflow_recovery", arts)
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
	runID = create(t, st2, "stubborn", "go", "cmp-overflow-2").RunID
	failed := waitStatus(t, st2, runID, "failed", 10*time.Second)
	if failed.ErrorCode != events.FailModelError || len(compactions(t, st2, runID)) != 1 {
		t.Errorf("run %+v, want failed model_error after one compaction", failed)
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
	e, st, reqs := agentEnv(t, askerAgent)
	runID := runUntil(t, st, "asker", "paint the door", "cmp-manual", "paused", 10*time.Second)
	res, err := apiOf(t, st).CompactRun(t.Context(), runID, "keep it short", client.CommandOptions{IdempotencyKey: "cmp-manual-c"})
	if err != nil || res.Outcome != client.OutcomeAccepted {
		t.Fatalf("compaction: %+v %v", res, err)
	}
	if res := input(t, st, runID, "clarification", "blue", "cmp-manual-a"); res.Outcome != client.OutcomeAccepted {
		t.Fatalf("clarification: %+v", res)
	}
	waitStatus(t, st, runID, "completed", 10*time.Second)
	arts := compactions(t, st, runID)
	if len(arts) != 1 || arts[0].TriggerReason != events.CompactManual {
		t.Fatalf("compactions %+v, want one manual_compact", arts)
	}
	var compacted, applied string
	for _, ev := range listEvents(t, st, runID) {
		switch ev.Type {
		case events.ContextCompacted:
			compacted = ev.CommandID
		case events.CommandApplied:
			if payloadOf[events.CommandAppliedPayload](t, ev).CommandType == "RequestCompaction" {
				applied = ev.CommandID
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
	runID := runUntil(t, st, "reader", "count far", "offload-1", "completed", 20*time.Second)
	done := payloads[events.ItemCompletedPayload](t, st, runID)
	var shell, part *events.ItemCompletedPayload
	for i, p := range done {
		switch p.ItemType {
		case events.ItemCommandExecution:
			shell = &done[i]
		case events.ItemToolCall:
			part = &done[i]
		}
	}
	if shell == nil || part == nil {
		t.Fatalf("completed items %+v", done)
	}
	ref := dataOf[events.ToolResultData](t, shell.Data).OutputRef
	full := 0
	for i := 1; i <= 20000; i++ {
		full += len(fmt.Sprint(i)) + 1
	}
	if ref == nil || ref.Bytes < int64(full) || !strings.Contains(ref.Path, "/output/") {
		t.Fatalf("outputRef %+v, want the %d bytes stored in the run's output directory", ref, full)
	}
	if n := len(shell.Content); n > profile.DefaultOffloadBytes {
		t.Errorf("the model's preview is %d bytes, over the %d offload threshold", n, profile.DefaultOffloadBytes)
	}
	text := part.Content
	if !strings.HasPrefix(text, "bytes 0-") || !strings.Contains(text, "1\n2\n3\n") {
		t.Errorf("read_file_part returned %q", text)
	}
	turns, _ := turnsOf(reqs.of("reader"))
	if got := lastToolResult(turns[len(turns)-1].Messages); got != text {
		t.Errorf("the model got %q", got)
	}
	e.invariants(st)
}
