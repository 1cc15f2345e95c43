package agentloop

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/events/eventstest"
)

// logBuilder is a run's log as the engine writes it (eventstest), with the
// shapes the projection cases share.
type logBuilder struct{ *eventstest.Log }

func newLog(t *testing.T, runID, input, parent string) *logBuilder {
	t.Helper()
	b := &logBuilder{eventstest.New(t, events.Identity{RunID: runID, TenantID: "acme", PlatformSessionID: "sess-1"})}
	b.Accepted("cmd_0000000000000000000000000"+runID[len(runID)-1:], events.RunAcceptedPayload{AgentID: "a",
		Input: events.UserInput{Content: input}, ParentRunID: parent, IdempotencyKey: "k-" + runID, Actor: events.Actor{Type: "user", ID: "u"}})
	b.Started("")
	return b
}

// response adds a completed model response with text and calls.
func (b *logBuilder) response(id, text string, turn int, calls ...events.ToolCallRef) *logBuilder {
	b.Response(id, events.AssistantData{Turn: turn, ToolCalls: calls}, text)
	return b
}

// startTool opens the item of call c of response resp, named as the engine
// names it.
func (b *logBuilder) startTool(resp string, c events.ToolCallRef, t events.ItemType) string {
	id := toolItemID(resp, c.ID)
	b.ToolStarted(id, resp, t, c)
	return id
}

func (b *logBuilder) toolOK(resp string, c events.ToolCallRef, out string) *logBuilder {
	b.ToolCompleted(b.startTool(resp, c, events.ItemToolCall), events.ItemToolCall, c, events.ToolResultData{Output: out})
	return b
}

func (b *logBuilder) toolFail(resp string, c events.ToolCallRef, code, msg string) *logBuilder {
	b.ItemFailed(b.startTool(resp, c, events.ItemToolCall), events.ItemToolCall, code, msg)
	return b
}

func (b *logBuilder) steer(id, text string) *logBuilder {
	b.Steer(id, "", text)
	return b
}

var (
	callLs   = events.ToolCallRef{ID: "call_1", Name: "shell", Arguments: `{"command":"ls"}`}
	callCat  = events.ToolCallRef{ID: "call_2", Name: "read_file", Arguments: `{"path":"README.md"}`}
	callBad  = events.ToolCallRef{ID: "call_3", Name: "shell", Arguments: `{"command":`}
	callAsk  = events.ToolCallRef{ID: "call_4", Name: "ask_user", Arguments: `{"question":"Which branch?"}`}
	callLost = events.ToolCallRef{ID: "call_5", Name: "shell", Arguments: `{"command":"make"}`}
)

const (
	r1 = "itm_01J0000000000000000000001A"
	r2 = "itm_01J0000000000000000000002A"
	r3 = "itm_01J0000000000000000000003A"
)

func TestProjectGolden(t *testing.T) {
	t.Parallel()
	cases := map[string]func(t *testing.T) (session [][]events.Envelope, run []events.Envelope){
		"text_only": func(t *testing.T) ([][]events.Envelope, []events.Envelope) {
			return nil, newLog(t, "run_01J000000000000000000000R1", "hello", "").response(r1, "Hi there.", 0).Events()
		},
		"tool_calls": func(t *testing.T) ([][]events.Envelope, []events.Envelope) {
			b := newLog(t, "run_01J000000000000000000000R1", "list and read", "")
			b.response(r1, "Let me look.", 0, callLs, callCat, callBad)
			b.toolOK(r1, callLs, "exit code 0\nREADME.md\n")
			b.toolOK(r1, callCat, "# Title\n")
			b.toolFail(r1, callBad, events.ToolErrInvalidArguments, "arguments are not valid JSON: unexpected end at offset 11")
			return nil, b.response(r2, "Done.", 1).Events()
		},
		// A steer that arrives while tools run is recorded before their
		// results, yet the results must follow their call directly.
		"steer_during_tools": func(t *testing.T) ([][]events.Envelope, []events.Envelope) {
			b := newLog(t, "run_01J000000000000000000000R1", "build it", "")
			b.response(r1, "", 0, callLs, callCat)
			id := b.startTool(r1, callLs, events.ItemToolCall)
			b.steer("itm_01J00000000000000000000S1A", "use the dev branch instead")
			b.ToolCompleted(id, events.ItemToolCall, callLs, events.ToolResultData{Output: "ok"})
			b.toolOK(r1, callCat, "text")
			return nil, b.Events()
		},
		// After a crash: the model call in flight failed runtime_lost (not
		// remembered), a tool call is reported lost, one never started.
		"crash_recovery": func(t *testing.T) ([][]events.Envelope, []events.Envelope) {
			b := newLog(t, "run_01J000000000000000000000R1", "make it", "")
			b.response(r1, "Building.", 0, callLost, callLs)
			b.toolFail(r1, callLost, events.ToolErrRuntimeLost, "the executor running this item stopped")
			b.ItemStarted(r2, events.ItemAssistantMessage, nil).Deltas(r2, "partial").
				Add(events.Draft{Type: events.RunCheckpointRestored, Payload: events.CheckpointRestoredPayload{LastSeq: 9}}).
				ItemFailed(r2, events.ItemAssistantMessage, events.FailRuntimeLost, "")
			return nil, b.Events()
		},
		// A cancel mid-stream leaves a truncated answer; the follow-up's
		// history still has a result for every call.
		"follow_up_after_cancel": func(t *testing.T) ([][]events.Envelope, []events.Envelope) {
			p := newLog(t, "run_01J000000000000000000000P1", "first question", "")
			p.response(r1, "Working on it.", 0, callLs, callCat)
			p.toolOK(r1, callLs, "a\nb\n")
			p.ItemStarted(r3, events.ItemAssistantMessage, nil).
				ItemCompleted(r3, events.ItemAssistantMessage, events.ItemStatusTruncated, "The files a", nil).
				Cancelled("", "user")
			f := newLog(t, "run_01J000000000000000000000F2", "and now?", "run_01J000000000000000000000P1")
			return [][]events.Envelope{p.Events()}, f.response(r2, "Now it is done.", 0).Events()
		},
		"clarification": func(t *testing.T) ([][]events.Envelope, []events.Envelope) {
			b := newLog(t, "run_01J000000000000000000000R1", "deploy", "")
			b.response(r1, "", 0, callAsk)
			id := b.startTool(r1, callAsk, events.ItemClarificationRequest)
			b.Paused(events.PauseAwaitingUserInput, id).
				ToolCompleted(id, events.ItemClarificationRequest, callAsk, events.ToolResultData{Output: "main"}).
				Resumed("")
			return nil, b.Events()
		},
	}
	checkGolden(t, cases)
}

// checkGolden compares each case's projection with
// testdata/project.<name>.golden.json and checks it is a valid conversation.
func checkGolden(t *testing.T, cases map[string]func(t *testing.T) ([][]events.Envelope, []events.Envelope)) {
	t.Helper()
	for name, build := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			session, run := build(t)
			got, err := json.MarshalIndent(Project("You are a test agent.", session, run), "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			eventstest.Golden(t, filepath.Join("testdata", "project."+name+".golden.json"), append(got, '\n'))
			assertProviderValid(t, Project("", session, run))
			// An execution projects from one fold it grows with the log.
			var f itemFold
			for n := range len(run) + 1 {
				if got, want := projectFolded("p", projectSession(session), run[:n], &f), Project("p", session, run[:n]); !reflect.DeepEqual(got, want) {
					t.Errorf("after %d events the folded projection is\n%+v\nwant\n%+v", n, got, want)
				}
			}
		})
	}
}

// compacted appends a compaction of everything so far, keeping retained.
func (b *logBuilder) compacted(goal string, retained ...string) *logBuilder {
	b.Compacted(events.ContextCompactedPayload{
		ArtifactID: "cmp_" + goal, TriggerReason: events.CompactBeforeModelRequest, RetainedItemIDs: retained,
		Summary: events.CompactionSummary{UserGoal: goal, ExecutedDecisions: []string{"listed the files"},
			ModifiedFiles: []string{"main.go"}, PendingTasks: []string{"run the tests"}},
		TokenStats: events.TokenStats{BeforeTokens: 900, AfterTokens: 100}})
	return b
}

var (
	callWrite = events.ToolCallRef{ID: "call_6", Name: "write_file", Arguments: `{"path":"main.go","content":"package main\n"}`}
	callTest  = events.ToolCallRef{ID: "call_7", Name: "shell", Arguments: `{"command":"go test ./..."}`}
	callPush  = events.ToolCallRef{ID: "call_8", Name: "shell", Arguments: `{"command":"git push"}`}
)

const (
	r4 = "itm_01J0000000000000000000004A"
	s1 = "itm_01J00000000000000000000S1A"
	s2 = "itm_01J00000000000000000000S2A"
)

func TestProjectCompactedGolden(t *testing.T) {
	t.Parallel()
	checkGolden(t, map[string]func(t *testing.T) ([][]events.Envelope, []events.Envelope){
		// Calls before the cutoff are replaced by the summary; the input and
		// the retained steer stay verbatim; calls after it are projected.
		"compaction_mid_run": func(t *testing.T) ([][]events.Envelope, []events.Envelope) {
			b := newLog(t, "run_01J000000000000000000000R1", "write main.go and test it", "")
			b.response(r1, "Looking first.", 0, callLs)
			b.toolOK(r1, callLs, "README.md\n")
			b.steer(s1, "keep it minimal")
			b.response(r2, "", 1, callWrite)
			b.toolOK(r2, callWrite, "created main.go (+1 -0)")
			b.compacted("write main.go", s1)
			b.response(r3, "Testing.", 2, callTest)
			b.toolFail(r3, callTest, "exit_code", "exit code 1")
			return nil, b.response(r4, "The tests fail.", 3).Events()
		},
		// The latest artifact wins: the first summary and everything before
		// the second cutoff are gone; the newest steer is retained.
		"compaction_twice": func(t *testing.T) ([][]events.Envelope, []events.Envelope) {
			b := newLog(t, "run_01J000000000000000000000R1", "write main.go and test it", "")
			b.steer(s1, "keep it minimal")
			b.response(r1, "", 0, callWrite)
			b.toolOK(r1, callWrite, "created main.go (+1 -0)")
			b.compacted("first summary", s1)
			b.steer(s2, "also push")
			b.response(r2, "", 1, callTest)
			b.toolOK(r2, callTest, "ok")
			b.compacted("second summary", s2)
			b.response(r3, "", 2, callPush)
			return nil, b.toolOK(r3, callPush, "pushed").Events()
		},
		// A follow-up compacted: the session's earlier runs are covered by
		// the summary and dropped.
		"compaction_follow_up": func(t *testing.T) ([][]events.Envelope, []events.Envelope) {
			p := newLog(t, "run_01J000000000000000000000P1", "first question", "")
			p.response(r1, "First answer.", 0)
			f := newLog(t, "run_01J000000000000000000000F2", "and now?", "run_01J000000000000000000000P1")
			f.response(r2, "", 0, callLs)
			f.toolOK(r2, callLs, "a\nb\n")
			f.compacted("answer the follow-up")
			return [][]events.Envelope{p.Events()}, f.response(r3, "Now it is done.", 1).Events()
		},
		// Compacted while a call awaits approval: the call finishes after the
		// cutoff, so its response is kept with every result.
		"compaction_awaiting_approval": func(t *testing.T) ([][]events.Envelope, []events.Envelope) {
			b := newLog(t, "run_01J000000000000000000000R1", "ship it", "")
			b.response(r1, "", 0, callTest, callPush)
			b.toolOK(r1, callTest, "ok")
			id := b.startTool(r1, callPush, events.ItemToolCall)
			b.Ask(id, callPush, "push", "").Paused(events.PauseAwaitingApproval, id)
			b.compacted("ship it")
			b.Decide(eventstest.Decision{CommandID: "cmd_01J0000000000000000000000D", ItemID: id, Decision: events.DecisionAllow,
				Scope: events.ScopeItem, Actor: events.Actor{Type: "user", ID: "u"}})
			b.ToolCompleted(id, events.ItemToolCall, callPush, events.ToolResultData{Output: "pushed"})
			return nil, b.response(r2, "Shipped.", 1).Events()
		},
	})
}

// TestTheSessionIsProjectedOncePerExecution: an execution projects its
// session's earlier runs once, and again only for another session.
func TestTheSessionIsProjectedOncePerExecution(t *testing.T) {
	t.Parallel()
	first := newLog(t, "run_01J000000000000000000000R1", "hello", "").response(r1, "Hi.", 0).Events()
	second := newLog(t, "run_01J000000000000000000000R2", "again", "run_01J000000000000000000000R1").response(r2, "Yes.", 0).Events()
	var r execution
	one := [][]events.Envelope{first}
	got := r.sessionProjection(one)
	if want := projectSession(one); !reflect.DeepEqual(got, want) || len(got) == 0 {
		t.Fatalf("projection %+v, want %+v", got, want)
	}
	if again := r.sessionProjection(one); &again[0] != &got[0] {
		t.Error("the same session was projected again")
	}
	two := [][]events.Envelope{first, second}
	if got := r.sessionProjection(two); !reflect.DeepEqual(got, projectSession(two)) {
		t.Errorf("another session: %+v", got)
	}
	if got := r.sessionProjection(nil); len(got) != 0 {
		t.Errorf("no session: %+v", got)
	}
}
