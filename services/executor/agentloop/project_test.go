package agentloop

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/xbot-runtime/xbot/events"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// logBuilder writes a run's log the way the executor does: every event is
// folded, so a case that breaks the state machine fails here, not in the
// projector.
type logBuilder struct {
	t   *testing.T
	id  events.Identity
	st  events.RunState
	evs []events.Envelope
	n   int
}

func newLog(t *testing.T, runID, input, parent string) *logBuilder {
	b := &logBuilder{t: t, id: events.Identity{RunID: runID, TenantID: "acme", PlatformSessionID: "sess-1"}}
	b.add(events.Draft{Type: events.RunAccepted, CommandID: "cmd_0000000000000000000000000" + runID[len(runID)-1:],
		Payload: events.RunAcceptedPayload{AgentID: "a", Input: events.UserInput{Content: input}, ParentRunID: parent,
			IdempotencyKey: "k-" + runID, Actor: events.Actor{Type: "user", ID: "u"}}})
	b.add(events.Draft{Type: events.RunStarted})
	return b
}

func (b *logBuilder) add(ds ...events.Draft) *logBuilder {
	b.t.Helper()
	for _, d := range ds {
		b.n++
		env, err := d.Seal(b.id, b.st.LastSeq+1, events.DerivedID("evt", b.id.RunID, string(rune(b.n))), int64(1000*b.n))
		if err != nil {
			b.t.Fatal(err)
		}
		if b.st, err = events.Fold(b.st, env); err != nil {
			b.t.Fatalf("%s: %v", d.Type, err)
		}
		b.evs = append(b.evs, env)
	}
	return b
}

func raw(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// response adds a completed model response with text and calls.
func (b *logBuilder) response(id, text string, turn int, calls ...events.ToolCallRef) *logBuilder {
	b.add(events.Draft{Type: events.ItemStarted, ItemID: id, Payload: events.ItemStartedPayload{ItemType: events.ItemAssistantMessage}})
	if text != "" {
		b.add(events.Draft{Type: events.ItemDelta, ItemID: id, Payload: events.ItemDeltaPayload{Delta: text}})
	}
	return b.add(events.Draft{Type: events.ItemCompleted, ItemID: id, Payload: events.ItemCompletedPayload{
		ItemType: events.ItemAssistantMessage, Status: events.ItemStatusCompleted, Content: text,
		Data: raw(events.AssistantData{Turn: turn, ToolCalls: calls})}})
}

func (b *logBuilder) startTool(resp string, c events.ToolCallRef, t events.ItemType) string {
	id := toolItemID(resp, c.ID)
	b.add(events.Draft{Type: events.ItemStarted, ItemID: id, Payload: events.ItemStartedPayload{ItemType: t,
		Data: raw(events.ToolCallData{ToolCallID: c.ID, ToolName: c.Name, Arguments: c.Arguments, ResponseItemID: resp})}})
	return id
}

func (b *logBuilder) toolOK(resp string, c events.ToolCallRef, out string) *logBuilder {
	id := b.startTool(resp, c, events.ItemToolCall)
	return b.add(events.Draft{Type: events.ItemCompleted, ItemID: id, Payload: events.ItemCompletedPayload{
		ItemType: events.ItemToolCall, Status: events.ItemStatusCompleted, Content: out,
		Data: raw(events.ToolResultData{ToolCallID: c.ID, ToolName: c.Name, Output: out})}})
}

func (b *logBuilder) toolFail(resp string, c events.ToolCallRef, code, msg string) *logBuilder {
	id := b.startTool(resp, c, events.ItemToolCall)
	return b.add(events.Draft{Type: events.ItemFailed, ItemID: id, Payload: events.ItemFailedPayload{
		ItemType: events.ItemToolCall, ErrorCode: code, Message: msg}})
}

func (b *logBuilder) steer(id, text string) *logBuilder {
	return b.add(
		events.Draft{Type: events.ItemStarted, ItemID: id, Payload: events.ItemStartedPayload{ItemType: events.ItemUserMessage, Content: text}},
		events.Draft{Type: events.ItemCompleted, ItemID: id, Payload: events.ItemCompletedPayload{
			ItemType: events.ItemUserMessage, Status: events.ItemStatusCompleted, Content: text}})
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
			return nil, newLog(t, "run_01J000000000000000000000R1", "hello", "").response(r1, "Hi there.", 0).evs
		},
		"tool_calls": func(t *testing.T) ([][]events.Envelope, []events.Envelope) {
			b := newLog(t, "run_01J000000000000000000000R1", "list and read", "")
			b.response(r1, "Let me look.", 0, callLs, callCat, callBad)
			b.toolOK(r1, callLs, "exit code 0\nREADME.md\n")
			b.toolOK(r1, callCat, "# Title\n")
			b.toolFail(r1, callBad, events.ToolErrInvalidArguments, "arguments are not valid JSON: unexpected end at offset 11")
			return nil, b.response(r2, "Done.", 1).evs
		},
		// A steer that arrives while tools run is recorded before their
		// results, yet the results must follow their call directly.
		"steer_during_tools": func(t *testing.T) ([][]events.Envelope, []events.Envelope) {
			b := newLog(t, "run_01J000000000000000000000R1", "build it", "")
			b.response(r1, "", 0, callLs, callCat)
			id := b.startTool(r1, callLs, events.ItemToolCall)
			b.steer("itm_01J00000000000000000000S1A", "use the dev branch instead")
			b.add(events.Draft{Type: events.ItemCompleted, ItemID: id, Payload: events.ItemCompletedPayload{
				ItemType: events.ItemToolCall, Status: events.ItemStatusCompleted, Content: "ok",
				Data: raw(events.ToolResultData{ToolCallID: callLs.ID, ToolName: "shell", Output: "ok"})}})
			b.toolOK(r1, callCat, "text")
			return nil, b.evs
		},
		// After a crash: the model call in flight failed runtime_lost (not
		// remembered), a tool call is reported lost, one never started.
		"crash_recovery": func(t *testing.T) ([][]events.Envelope, []events.Envelope) {
			b := newLog(t, "run_01J000000000000000000000R1", "make it", "")
			b.response(r1, "Building.", 0, callLost, callLs)
			b.toolFail(r1, callLost, events.ToolErrRuntimeLost, "the executor running this item stopped")
			b.add(events.Draft{Type: events.ItemStarted, ItemID: r2, Payload: events.ItemStartedPayload{ItemType: events.ItemAssistantMessage}},
				events.Draft{Type: events.ItemDelta, ItemID: r2, Payload: events.ItemDeltaPayload{Delta: "partial"}},
				events.Draft{Type: events.RunCheckpointRestored, Payload: events.CheckpointRestoredPayload{LastSeq: 9}},
				events.Draft{Type: events.ItemFailed, ItemID: r2, Payload: events.ItemFailedPayload{ItemType: events.ItemAssistantMessage, ErrorCode: events.FailRuntimeLost}})
			return nil, b.evs
		},
		// A cancel mid-stream leaves a truncated answer; the follow-up's
		// history still has a result for every call.
		"follow_up_after_cancel": func(t *testing.T) ([][]events.Envelope, []events.Envelope) {
			p := newLog(t, "run_01J000000000000000000000P1", "first question", "")
			p.response(r1, "Working on it.", 0, callLs, callCat)
			p.toolOK(r1, callLs, "a\nb\n")
			p.add(events.Draft{Type: events.ItemStarted, ItemID: r3, Payload: events.ItemStartedPayload{ItemType: events.ItemAssistantMessage}},
				events.Draft{Type: events.ItemCompleted, ItemID: r3, Payload: events.ItemCompletedPayload{
					ItemType: events.ItemAssistantMessage, Status: events.ItemStatusTruncated, Content: "The files a"}},
				events.Draft{Type: events.RunCancelled, Payload: events.RunCancelledPayload{Reason: "user"}})
			f := newLog(t, "run_01J000000000000000000000F2", "and now?", "run_01J000000000000000000000P1")
			return [][]events.Envelope{p.evs}, f.response(r2, "Now it is done.", 0).evs
		},
		"clarification": func(t *testing.T) ([][]events.Envelope, []events.Envelope) {
			b := newLog(t, "run_01J000000000000000000000R1", "deploy", "")
			b.response(r1, "", 0, callAsk)
			id := b.startTool(r1, callAsk, events.ItemClarificationRequest)
			b.add(events.Draft{Type: events.RunPaused, Payload: events.RunPausedPayload{PauseReason: events.PauseAwaitingUserInput, ItemIDs: []string{id}}},
				events.Draft{Type: events.ItemCompleted, ItemID: id, Payload: events.ItemCompletedPayload{
					ItemType: events.ItemClarificationRequest, Status: events.ItemStatusCompleted, Content: "main",
					Data: raw(events.ToolResultData{ToolCallID: callAsk.ID, ToolName: "ask_user", Output: "main"})}},
				events.Draft{Type: events.RunResumed})
			return nil, b.evs
		},
	}
	for name, build := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			session, run := build(t)
			got, err := json.MarshalIndent(Project("You are a test agent.", session, run), "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			path := filepath.Join("testdata", "project."+name+".golden.json")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if string(got) != string(want) {
				t.Errorf("projection differs from %s:\ngot:\n%s\nwant:\n%s", path, got, want)
			}
			assertProviderValid(t, Project("", session, run))
		})
	}
}
