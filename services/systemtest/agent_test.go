package systemtest_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/services/api/client"
	"github.com/xbot-runtime/xbot/services/engine/compute/local"
	"github.com/xbot-runtime/xbot/services/engine/model"
	"github.com/xbot-runtime/xbot/services/engine/model/scripted"
	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/stack"
)

// The end-to-end tests of the agent loop: HTTP API → Kafka → executor with
// the scripted model and the local sandbox → Kafka → Postgres → HTTP API.

// requests records what the scripted model was sent, per agent.
type requests struct {
	mu  sync.Mutex
	got map[string][]model.Request
}

func (r *requests) resolver(p profile.Profile) (model.Provider, string, error) {
	return &scripted.Provider{Script: p.Script, Observe: func(req model.Request) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.got[p.ID] = append(r.got[p.ID], req)
	}}, profile.ModelScripted, nil
}

func (r *requests) of(agent string) []model.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got[agent])
}

// agentEnv is an env whose stack runs the given agents with tools.
func agentEnv(t *testing.T, agents ...profile.Profile) (*env, *stack.Stack, *requests) {
	t.Helper()
	return agentEnvIn(t, t.TempDir(), agents...)
}

// agentEnvIn is agentEnv with the local sandboxes below dir.
func agentEnvIn(t *testing.T, dir string, agents ...profile.Profile) (*env, *stack.Stack, *requests) {
	t.Helper()
	e := newEnv(t).withAgents(agents...)
	comp := localCompute(t, dir)
	reqs := &requests{got: map[string][]model.Request{}}
	st := e.startWith("all", func(o *stack.Options) { o.Compute, o.Models = comp, reqs.resolver })
	return e, st, reqs
}

// withAgents makes agents the env's profile catalog.
func (e *env) withAgents(agents ...profile.Profile) *env {
	e.t.Helper()
	cat, err := profile.NewCatalog(agents...)
	if err != nil {
		e.t.Fatal(err)
	}
	e.cat = cat
	return e
}

// localCompute is the local sandbox provider with its sandboxes below dir.
func localCompute(t *testing.T, dir string) *local.Provider {
	t.Helper()
	comp, err := local.New(local.Config{Dir: dir, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	return comp
}

var allTools = []string{"shell", "read_file", "write_file", "list_files", "ask_user"}

func call1(name, args string) []profile.ScriptedCall {
	return []profile.ScriptedCall{{Name: name, Arguments: args}}
}

// runStart is how the log of every run that starts begins.
var runStart = []string{"runtime.run.accepted", "runtime.capability.snapshot_frozen", "runtime.run.started"}

// sequence is a run's log as "type" or "type:itemType" lines; consecutive
// deltas of one item, whose count depends on timing, are one "delta+" line.
func sequence(t *testing.T, st *stack.Stack, runID string) []string {
	t.Helper()
	var out []string
	lastDelta := ""
	for _, ev := range listEvents(t, st, runID) {
		if ev.Type == events.ItemDelta {
			if lastDelta != ev.ItemID {
				out = append(out, "delta+")
			}
			lastDelta = ev.ItemID
			continue
		}
		lastDelta = ""
		line := string(ev.Type)
		var item struct {
			ItemType events.ItemType `json:"itemType"`
		}
		if err := json.Unmarshal(ev.Payload, &item); err == nil && item.ItemType != "" {
			line += ":" + string(item.ItemType)
		}
		out = append(out, line)
	}
	return out
}

// assertLog fails unless the run's log, as sequence gives it, is runStart
// followed by want within 10 s. The read model applies each partition on its
// own, so an outcome the API answered from its tail of the log (a duplicate
// follow-up's, say) may reach it a moment after the events of another
// partition's run the test waited for.
func assertLog(t *testing.T, st *stack.Stack, runID string, want ...string) {
	t.Helper()
	want = append(slices.Clone(runStart), want...)
	eventually.Succeeds(t, 10*time.Second, "the event sequence of "+runID, func() error {
		if got := sequence(t, st, runID); !slices.Equal(got, want) {
			return fmt.Errorf("\n got: %s\nwant: %s", strings.Join(got, "\n      "), strings.Join(want, "\n      "))
		}
		return nil
	})
}

// completedOutput is the output the run's runtime.run.completed records.
func completedOutput(t *testing.T, st *stack.Stack, runID string) string {
	t.Helper()
	done := payloads[events.RunCompletedPayload](t, st, runID)
	if len(done) != 1 {
		t.Fatalf("run %s has %d runtime.run.completed events, want 1", runID, len(done))
	}
	return done[0].Output
}

func TestAgentRunsToolsOverSeveralTurns(t *testing.T) {
	t.Parallel()
	agent := profile.Profile{ID: "worker", Model: profile.ModelScripted, Tools: allTools,
		Limits: profile.Limits{ToolConcurrency: 1}, Script: []profile.Turn{
			{Text: "Let me write it.", ToolCalls: []profile.ScriptedCall{
				{Name: "shell", Arguments: `{"command":"echo hi from shell; echo oops >&2; exit 3"}`},
				{Name: "write_file", Arguments: `{"path":"notes.md","content":"one\ntwo\n"}`},
			}},
			{ToolCalls: call1("read_file", `{"path":"notes.md"}`)},
			{Text: "All done."},
		}}
	e, st, reqs := agentEnv(t, agent)
	runID := runUntil(t, st, "worker", "write notes", "tools-1", "completed", 10*time.Second)
	if out := completedOutput(t, st, runID); out != "" && out != "All done." {
		t.Errorf("output %q", out)
	}
	assertLog(t, st, runID,
		"runtime.item.started:assistant_message", "delta+", "runtime.item.completed:assistant_message",
		"runtime.item.started:command_execution", "delta+", "runtime.item.completed:command_execution",
		"runtime.item.started:file_change", "runtime.item.completed:file_change",
		"runtime.item.started:assistant_message", "runtime.item.completed:assistant_message",
		"runtime.item.started:tool_call", "runtime.item.completed:tool_call",
		"runtime.item.started:assistant_message", "delta+", "runtime.item.completed:assistant_message",
		"runtime.run.completed")
	done := payloads[events.ItemCompletedPayload](t, st, runID)
	exec := dataOf[events.ToolResultData](t, done[1].Data).Exec
	if exec == nil || exec.ExitCode != 3 || !strings.Contains(exec.Stdout, "hi from shell") || !strings.Contains(exec.Stderr, "oops") {
		t.Errorf("command_execution data %+v", exec)
	}
	change := dataOf[events.ToolResultData](t, done[2].Data).FileChange
	if change == nil || !strings.Contains(change.Diff, "+one\n+two\n") {
		t.Errorf("file_change %+v", change)
	}
	// The model saw every result: turn 2's request holds the file's content.
	got := reqs.of("worker")
	if len(got) != 3 {
		t.Fatalf("%d model calls, want 3", len(got))
	}
	last := got[2].Messages
	if m := last[len(last)-1]; m.Role != model.RoleTool || !strings.Contains(m.Content, "one\ntwo") {
		t.Errorf("turn 3 ends with %+v, want the read_file result", m)
	}
	if len(got[0].Tools) != len(allTools)+1 { // + read_file_part, for offloaded outputs
		t.Errorf("model offered %d tools, want %d", len(got[0].Tools), len(allTools)+1)
	}
	e.invariants(st)
}

func TestAgentMalformedToolCallsGoBackToTheModel(t *testing.T) {
	t.Parallel()
	agent := profile.Profile{ID: "clumsy", Model: profile.ModelScripted, Tools: []string{"shell"},
		Limits: profile.Limits{ToolConcurrency: 1}, Script: []profile.Turn{
			{ToolCalls: []profile.ScriptedCall{
				{Name: "shell", Arguments: `{"command": 42}`},
				{Name: "shell", Arguments: `{"command": "echo`},
				{Name: "teleport", Arguments: `{}`},
				{Name: "write_file", Arguments: `{"path":"x","content":"y"}`}, // exists, but not offered to this agent
			}},
			{Text: "Sorry, my mistake."},
		}}
	e, st, reqs := agentEnv(t, agent)
	runID := runUntil(t, st, "clumsy", "go", "bad-args-1", "completed", 10*time.Second)
	assertLog(t, st, runID,
		"runtime.item.started:assistant_message", "runtime.item.completed:assistant_message",
		"runtime.item.started:command_execution", "runtime.item.failed:command_execution",
		"runtime.item.started:command_execution", "runtime.item.failed:command_execution",
		"runtime.item.started:tool_call", "runtime.item.failed:tool_call",
		"runtime.item.started:tool_call", "runtime.item.failed:tool_call",
		"runtime.item.started:assistant_message", "delta+", "runtime.item.completed:assistant_message",
		"runtime.run.completed")
	var codes []string
	for _, p := range payloads[events.ItemFailedPayload](t, st, runID) {
		codes = append(codes, p.ErrorCode)
	}
	if want := []string{"invalid_arguments", "invalid_arguments", "unknown_tool", "unknown_tool"}; !slices.Equal(codes, want) {
		t.Errorf("error codes %v, want %v", codes, want)
	}
	msgs := reqs.of("clumsy")[1].Messages
	var results []string
	for _, m := range msgs {
		if m.Role == model.RoleTool {
			results = append(results, m.Content)
		}
	}
	if len(results) != 4 || !strings.Contains(results[2], "teleport") {
		t.Errorf("the model got results %q", results)
	}
	e.invariants(st)
}

func TestAgentSteerReachesTheNextModelRequest(t *testing.T) {
	t.Parallel()
	gate := filepath.Join(t.TempDir(), "gate")
	agent := profile.Profile{ID: "steerable", Model: profile.ModelScripted, Tools: []string{"shell"}, Script: []profile.Turn{
		{Text: "Working.", ToolCalls: call1("shell", fmt.Sprintf(`{"command":"while [ ! -f %s ]; do sleep 0.02; done"}`, gate))},
		{Text: "Switched as you asked."},
	}}
	e, st, reqs := agentEnv(t, agent)
	runID := create(t, st, "steerable", "build the site", "steer-1").RunID
	waitItem(t, st, runID, "command_execution")
	for i, text := range []string{"use the dev branch", "and skip the tests"} {
		if res := input(t, st, runID, "steer", text, "steer-1-"+strconv.Itoa(i)); res.Outcome != client.OutcomeAccepted {
			t.Fatalf("steer: %+v", res)
		}
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, st, runID, "completed", 10*time.Second)
	assertLog(t, st, runID,
		"runtime.item.started:assistant_message", "delta+", "runtime.item.completed:assistant_message",
		"runtime.item.started:command_execution",
		"runtime.command.accepted", "runtime.command.accepted",
		"runtime.item.completed:command_execution",
		"runtime.item.started:user_message", "runtime.item.completed:user_message", "runtime.command.applied",
		"runtime.item.started:user_message", "runtime.item.completed:user_message", "runtime.command.applied",
		"runtime.item.started:assistant_message", "delta+", "runtime.item.completed:assistant_message",
		"runtime.run.completed")
	got := reqs.of("steerable")
	if len(got) != 2 {
		t.Fatalf("%d model calls, want 2", len(got))
	}
	msgs := got[1].Messages
	n := len(msgs)
	if n < 2 || msgs[n-2].Content != "use the dev branch" || msgs[n-1].Content != "and skip the tests" || msgs[n-1].Role != model.RoleUser {
		t.Errorf("second request ends with %+v, want both steers in order", msgs[max(0, n-3):])
	}
	e.invariants(st)
}

// askerAgent asks the user a question, then answers.
var askerAgent = profile.Profile{ID: "asker", Model: profile.ModelScripted, Tools: []string{"ask_user"}, Script: []profile.Turn{
	{ToolCalls: call1("ask_user", `{"question":"Which colour?"}`)},
	{Text: "Painting it."},
}}

func TestAgentAsksAndResumesOnClarification(t *testing.T) {
	t.Parallel()
	e, st, reqs := agentEnv(t, askerAgent)
	runID := create(t, st, "asker", "paint the door", "ask-1").RunID
	run := waitStatus(t, st, runID, "paused", 10*time.Second)
	if run.PauseReason != string(events.PauseAwaitingUserInput) {
		t.Errorf("pauseReason %q", run.PauseReason)
	}
	// A steer is not valid while the run waits for an answer.
	if res := input(t, st, runID, "steer", "blue", "ask-1-steer"); res.Outcome != client.OutcomeRejected || res.Code != "invalid_state" {
		t.Fatalf("steer on a paused run: %+v", res)
	}
	if res := input(t, st, runID, "clarification", "blue", "ask-1-answer"); res.Outcome != client.OutcomeAccepted {
		t.Fatalf("clarification: %+v", res)
	}
	waitStatus(t, st, runID, "completed", 10*time.Second)
	assertLog(t, st, runID,
		"runtime.item.started:assistant_message", "runtime.item.completed:assistant_message",
		"runtime.item.started:clarification_request", "runtime.run.paused",
		"runtime.command.rejected",
		"runtime.command.accepted",
		"runtime.item.completed:clarification_request", "runtime.command.applied", "runtime.run.resumed",
		"runtime.item.started:assistant_message", "delta+", "runtime.item.completed:assistant_message",
		"runtime.run.completed")
	msgs := reqs.of("asker")[1].Messages
	if m := msgs[len(msgs)-1]; m.Role != model.RoleTool || m.Content != "blue" {
		t.Errorf("the model got %+v as the answer, want the tool result \"blue\"", m)
	}
	e.invariants(st)
}

func TestAgentFollowUpStartsTheSessionsNextRun(t *testing.T) {
	t.Parallel()
	e, st, reqs := agentEnv(t, echoAgent())
	first := createRun(t, apiOf(t, st), client.CreateRunRequest{AgentID: "chat", Input: client.UserInput{Content: "first"},
		PlatformSessionID: "sess-42"}, "follow-1").RunID
	waitStatus(t, st, first, "completed", 10*time.Second)
	var next string
	for _, key := range []string{"follow-1-next", "follow-1-next"} { // the retry is a duplicate naming the same run
		res := input(t, st, first, "follow_up", "second", key)
		if res.CreatedRunID == "" {
			t.Fatalf("follow-up: %+v", res)
		}
		if next != "" && res.CreatedRunID != next {
			t.Fatalf("retried follow-up names run %s, first named %s", res.CreatedRunID, next)
		}
		next = res.CreatedRunID
	}
	run := waitStatus(t, st, next, "completed", 10*time.Second)
	if run.ParentRunID != first || run.PlatformSessionID != "sess-42" || run.AgentID != "chat" {
		t.Errorf("next run %+v", run)
	}
	assertLog(t, st, first,
		"runtime.item.started:assistant_message", "delta+", "runtime.item.completed:assistant_message",
		"runtime.run.completed", "runtime.command.applied", "runtime.command.duplicate")
	assertLog(t, st, next,
		"runtime.item.started:assistant_message", "delta+", "runtime.item.completed:assistant_message",
		"runtime.run.completed")
	got := reqs.of("chat")
	if len(got) != 2 {
		t.Fatalf("%d model calls, want 2", len(got))
	}
	convo := conversation(got[1].Messages)
	want := []string{"user: first", "assistant: You said: first", "user: second"}
	if !slices.Equal(convo, want) {
		t.Errorf("follow-up context %q, want %q", convo, want)
	}
	// Following up a running run is refused and changes nothing.
	e.invariants(st)
}

func TestAgentCancelKillsTheRunningToolWithin2s(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cmd := fmt.Sprintf(`sleep 600 & echo $! > %[1]s/child.pid; echo $$ > %[1]s/parent.pid; wait`, dir)
	agent := profile.Profile{ID: "sleeper", Model: profile.ModelScripted, Tools: []string{"shell"}, Script: []profile.Turn{
		{ToolCalls: []profile.ScriptedCall{{Name: "shell", Arguments: fmt.Sprintf(`{"command":%q}`, cmd)}}},
		{Text: "never reached"},
	}}
	e, st, _ := agentEnv(t, agent)
	runID := create(t, st, "sleeper", "sleep", "cancel-tool-1").RunID
	var pids []int
	eventually.Succeeds(t, 10*time.Second, "the tool's processes started", func() error {
		pids = pids[:0]
		for _, f := range []string{"parent.pid", "child.pid"} {
			raw, err := os.ReadFile(filepath.Join(dir, f))
			if err != nil {
				return err
			}
			pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
			if err != nil {
				return err
			}
			pids = append(pids, pid)
		}
		return nil
	})
	start := time.Now()
	if res := cancelRun(t, st, runID, "taking too long", "cancel-tool-1-c"); res.Outcome != client.OutcomeAccepted {
		t.Fatalf("cancel: %+v", res)
	}
	eventually.Succeeds(t, 2*time.Second, "the tool's process group is gone", func() error {
		for _, pid := range pids {
			if alive(pid) {
				return fmt.Errorf("pid %d still running after %s", pid, time.Since(start))
			}
		}
		return nil
	})
	run := waitStatus(t, st, runID, "cancelled", 10*time.Second)
	if run.CancelReason != "" && run.CancelReason != "taking too long" {
		t.Errorf("cancel reason %q", run.CancelReason)
	}
	assertLog(t, st, runID,
		"runtime.item.started:assistant_message", "runtime.item.completed:assistant_message",
		"runtime.item.started:command_execution", "runtime.command.accepted",
		"runtime.item.failed:command_execution", "runtime.command.applied", "runtime.run.cancelled")
	failed := payloads[events.ItemFailedPayload](t, st, runID)
	if failed[0].ErrorCode != events.ToolErrCancelled {
		t.Errorf("tool item failed with %q, want cancelled", failed[0].ErrorCode)
	}
	e.invariants(st)
}

func TestAgentBudgetExhaustion(t *testing.T) {
	t.Parallel()
	agent := profile.Profile{ID: "looper", Model: profile.ModelScripted, Tools: []string{"shell"},
		Limits: profile.Limits{MaxTurns: 2},
		Script: []profile.Turn{{ToolCalls: call1("shell", `{"command":"true"}`)}}} // the last turn repeats forever
	e, st, _ := agentEnv(t, agent)
	runID := create(t, st, "looper", "loop", "budget-1").RunID
	run := waitStatus(t, st, runID, "failed", 10*time.Second)
	if run.ErrorCode != events.FailBudgetExhausted {
		t.Errorf("errorCode %q, want budget_exhausted", run.ErrorCode)
	}
	assertLog(t, st, runID,
		"runtime.item.started:assistant_message", "runtime.item.completed:assistant_message",
		"runtime.item.started:command_execution", "runtime.item.completed:command_execution",
		"runtime.item.started:assistant_message", "runtime.item.completed:assistant_message",
		"runtime.item.started:command_execution", "runtime.item.completed:command_execution",
		"runtime.run.failed")
	e.invariants(st)
}

// TestAgentRunsToolCallsConcurrently gives one response two calls that can
// only finish when both run at once: each waits for the other to start.
func TestAgentRunsToolCallsConcurrently(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	wait := func(me, other string) string {
		return fmt.Sprintf(`{"command":"touch %[1]s/%[2]s; i=0; while [ ! -f %[1]s/%[3]s ]; do i=$((i+1)); [ $i -gt 250 ] && exit 9; sleep 0.02; done"}`, dir, me, other)
	}
	agent := profile.Profile{ID: "pair", Model: profile.ModelScripted, Tools: []string{"shell"},
		Limits: profile.Limits{ToolConcurrency: 2}, Script: []profile.Turn{
			{ToolCalls: []profile.ScriptedCall{{Name: "shell", Arguments: wait("a", "b")}, {Name: "shell", Arguments: wait("b", "a")}}},
			{Text: "Both ran."},
		}}
	e, st, _ := agentEnv(t, agent)
	runID := runUntil(t, st, "pair", "go", "pair-1", "completed", 15*time.Second)
	for _, p := range payloads[events.ItemCompletedPayload](t, st, runID) {
		if p.ItemType != events.ItemCommandExecution {
			continue
		}
		if ex := dataOf[events.ToolResultData](t, p.Data).Exec; ex == nil || ex.ExitCode != 0 {
			t.Errorf("a call timed out waiting for the other (exec %+v): they did not run concurrently", ex)
		}
	}
	e.invariants(st)
}

// waitItem waits until the run has started an item of type t.
func waitItem(t *testing.T, st *stack.Stack, runID string, typ events.ItemType) {
	t.Helper()
	eventually.Succeeds(t, 10*time.Second, "an item "+string(typ), func() error {
		for _, p := range payloads[events.ItemStartedPayload](t, st, runID) {
			if p.ItemType == typ {
				return nil
			}
		}
		return fmt.Errorf("no %s item yet", typ)
	})
}

// alive reports whether pid is a running (not zombie) process.
func alive(pid int) bool {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the parenthesised command name.
	s := string(raw)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] != 'Z'
}

// talkerRepeat makes the talker's answer stream for about 30 s (4 bytes every
// 10 ms), far longer than a cancel takes to be admitted on a loaded machine.
const talkerRepeat = 400

func TestAgentCancelDuringStreamKeepsTheTruncatedText(t *testing.T) {
	t.Parallel()
	agent := profile.Profile{ID: "talker", Model: profile.ModelScripted, Script: []profile.Turn{
		{Text: strings.Repeat("a long answer streaming slowly ", talkerRepeat), ChunkChars: 4, Delay: 10 * time.Millisecond,
			ToolCalls: call1("shell", `{"command":"true"}`)},
	}}
	e, st, _ := agentEnv(t, agent)
	runID := create(t, st, "talker", "talk", "cancel-stream-1").RunID
	eventually.Succeeds(t, 10*time.Second, "streaming", func() error {
		if len(eventsOf(t, st, runID, events.ItemDelta)) == 0 {
			return fmt.Errorf("no delta yet")
		}
		return nil
	})
	if res := cancelRun(t, st, runID, "", "cancel-stream-1-c"); res.Outcome != client.OutcomeAccepted {
		t.Fatalf("cancel: %+v", res)
	}
	waitStatus(t, st, runID, "cancelled", 10*time.Second)
	// The stream stops at the loop's next safe point after the cancel is
	// admitted: how many deltas (zero or more) come after command.accepted
	// is timing, not protocol, so that line is dropped before comparing.
	got := sequence(t, st, runID)
	if i := slices.Index(got, "runtime.command.accepted"); i >= 0 && i+1 < len(got) && got[i+1] == "delta+" {
		got = slices.Delete(got, i+1, i+2)
	}
	want := append(slices.Clone(runStart),
		"runtime.item.started:assistant_message", "delta+", "runtime.command.accepted",
		"runtime.item.completed:assistant_message", "runtime.command.applied", "runtime.run.cancelled")
	if !slices.Equal(got, want) {
		t.Errorf("event sequence of %s:\n got: %s\nwant: %s", runID, strings.Join(got, "\n      "), strings.Join(want, "\n      "))
	}
	done := payloads[events.ItemCompletedPayload](t, st, runID)[0]
	text := done.Content
	var streamed strings.Builder
	for _, d := range payloads[events.ItemDeltaPayload](t, st, runID) {
		streamed.WriteString(d.Delta)
	}
	if done.Status != events.ItemStatusTruncated || text == "" || text != streamed.String() || len(text) >= talkerRepeat*len("a long answer streaming slowly ") {
		t.Errorf("closed as %q with %d bytes (streamed %d): want truncated with exactly what was streamed", done.Status, len(text), streamed.Len())
	}
	e.invariants(st)
}

func TestAgentToolCallBudgetAndWallTime(t *testing.T) {
	t.Parallel()
	calls := profile.Profile{ID: "caller", Model: profile.ModelScripted, Tools: []string{"shell"},
		Limits: profile.Limits{MaxToolCalls: 3, ToolConcurrency: 1},
		Script: []profile.Turn{{ToolCalls: []profile.ScriptedCall{
			{Name: "shell", Arguments: `{"command":"true"}`}, {Name: "shell", Arguments: `{"command":"true"}`}}}}}
	slow := profile.Profile{ID: "slowpoke", Model: profile.ModelScripted, Tools: []string{"shell"},
		Limits: profile.Limits{MaxWallTime: 700 * time.Millisecond},
		Script: []profile.Turn{{ToolCalls: call1("shell", `{"command":"sleep 30"}`)}}}
	e, st, _ := agentEnv(t, calls, slow)
	a := create(t, st, "caller", "go", "budget-calls-1").RunID
	b := create(t, st, "slowpoke", "go", "budget-wall-1").RunID
	for _, id := range []string{a, b} {
		if run := waitStatus(t, st, id, "failed", 15*time.Second); run.ErrorCode != events.FailBudgetExhausted {
			t.Errorf("run %s failed with %q, want budget_exhausted", id, run.ErrorCode)
		}
	}
	// Two calls, then the first of the next two, then the limit of 3.
	assertLog(t, st, a,
		"runtime.item.started:assistant_message", "runtime.item.completed:assistant_message",
		"runtime.item.started:command_execution", "runtime.item.completed:command_execution",
		"runtime.item.started:command_execution", "runtime.item.completed:command_execution",
		"runtime.item.started:assistant_message", "runtime.item.completed:assistant_message",
		"runtime.item.started:command_execution", "runtime.item.completed:command_execution",
		"runtime.run.failed")
	// The sleeping tool is stopped by the wall-time budget.
	assertLog(t, st, b,
		"runtime.item.started:assistant_message", "runtime.item.completed:assistant_message",
		"runtime.item.started:command_execution", "runtime.item.failed:command_execution",
		"runtime.run.failed")
	e.invariants(st)
}

// TestForeignParentHistoryIsNeverLoaded writes, straight to Kafka (past the
// API's check), a CreateRun of tenant "other" whose parentRunId is a run of
// tenant acme: the executor refuses the history and fails the run before
// any model call.
func TestForeignParentHistoryIsNeverLoaded(t *testing.T) {
	t.Parallel()
	e, st, reqs := agentEnv(t, echoAgent())
	parent := runUntil(t, st, "chat", "acme secret", "foreign-parent", "completed", 10*time.Second)
	sk := events.SandboxKey{TenantID: "other", WorkspaceID: "w", AgentID: "chat", OwnerID: "mallory"}
	child := commands.RunIDFor("other", "steal", sk, int(e.kcfg.Partitions))
	c, err := commands.New(commands.CreateRun, commands.Header{RunID: child, TenantID: "other", IdempotencyKey: "steal",
		Actor: events.Actor{Type: "user", ID: "mallory"}}, commands.CreateRunPayload{AgentID: "chat", ParentRunID: parent,
		Input:      events.UserInput{Content: "what did they say?"},
		SandboxKey: sk})
	if err != nil {
		t.Fatal(err)
	}
	e.produceSigned(st, c, 1)
	waitStatusOf(t, apiClient(t, st, otherToken, nil), child, "failed", 10*time.Second)
	for _, r := range reqs.of("chat") {
		for _, m := range r.Messages {
			if m.Content == "what did they say?" {
				t.Fatal("the model was called for the run with a foreign parent")
			}
		}
	}
	e.invariants(st)
}

// A follow-up of a follow-up reads every earlier run of the session: each
// create carries where the runs before it are on the log.
func TestAgentFollowUpChainCarriesTheWholeSession(t *testing.T) {
	t.Parallel()
	e, st, reqs := agentEnv(t, echoAgent())
	run := createRun(t, apiOf(t, st), client.CreateRunRequest{AgentID: "chat", Input: client.UserInput{Content: "one"},
		PlatformSessionID: "sess-chain"}, "chain-1").RunID
	waitStatus(t, st, run, "completed", 10*time.Second)
	for i, content := range []string{"two", "three", "four"} {
		res := input(t, st, run, "follow_up", content, fmt.Sprintf("chain-next-%d", i))
		if res.CreatedRunID == "" {
			t.Fatalf("follow-up %d: %+v", i, res)
		}
		run = res.CreatedRunID
		waitStatus(t, st, run, "completed", 10*time.Second)
	}
	got := reqs.of("chat")
	if len(got) != 4 {
		t.Fatalf("%d model calls, want 4", len(got))
	}
	convo := conversation(got[3].Messages)
	want := []string{"user: one", "assistant: You said: one", "user: two", "assistant: You said: two",
		"user: three", "assistant: You said: three", "user: four"}
	if !slices.Equal(convo, want) {
		t.Errorf("the fourth run's context %q, want %q", convo, want)
	}
	e.invariants(st)
}

// A create that names its parent itself (not a follow-up) gets the parent's
// session too, located through the parent's checkpoint.
func TestAgentCreateNamingItsParentReadsTheSession(t *testing.T) {
	t.Parallel()
	e, st, reqs := agentEnv(t, echoAgent())
	first := createRun(t, apiOf(t, st), client.CreateRunRequest{AgentID: "chat", Input: client.UserInput{Content: "one"},
		PlatformSessionID: "sess-parent"}, "parent-1").RunID
	waitStatus(t, st, first, "completed", 10*time.Second)
	res := input(t, st, first, "follow_up", "two", "parent-next")
	waitStatus(t, st, res.CreatedRunID, "completed", 10*time.Second)
	third := createRun(t, apiOf(t, st), client.CreateRunRequest{AgentID: "chat", Input: client.UserInput{Content: "three"},
		PlatformSessionID: "sess-parent", ParentRunID: res.CreatedRunID}, "parent-3").RunID
	waitStatus(t, st, third, "completed", 10*time.Second)
	got := reqs.of("chat")
	if len(got) != 3 {
		t.Fatalf("%d model calls, want 3", len(got))
	}
	convo := conversation(got[2].Messages)
	want := []string{"user: one", "assistant: You said: one", "user: two", "assistant: You said: two", "user: three"}
	if !slices.Equal(convo, want) {
		t.Errorf("the third run's context %q, want %q", convo, want)
	}
	e.invariants(st)
}

// echoAgent answers every turn with "You said: " and its input.
func echoAgent() profile.Profile {
	return profile.Profile{ID: "chat", Model: profile.ModelScripted, Script: []profile.Turn{{Text: "You said: {{input}}"}}}
}

// conversation is msgs as "role: content" lines.
func conversation(msgs []model.Message) []string {
	out := make([]string, 0, len(msgs))
	for _, m := range msgs {
		out = append(out, string(m.Role)+": "+m.Content)
	}
	return out
}
