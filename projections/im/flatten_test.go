package im_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/events/eventstest"
	"github.com/xbot-runtime/xbot/projections/im"
)

// id returns a readable valid id: prefix_01J, n as 22 digits, then suffix.
func id(prefix string, n int, suffix string) string {
	return fmt.Sprintf("%s_01J%022d%s", prefix, n, suffix)
}

func itm(n int) string { return id("itm", n, "A") }

var (
	run1, run2, run3, run4, run5 = id("run", 1, "R"), id("run", 2, "R"), id("run", 3, "R"), id("run", 4, "R"), id("run", 5, "R")
	callLs                       = events.ToolCallRef{ID: "call_1", Name: "shell", Arguments: `{"command":"ls"}`}
	callRm                       = events.ToolCallRef{ID: "call_2", Name: "shell", Arguments: `{"command":"rm -rf build"}`}
	callAsk                      = events.ToolCallRef{ID: "call_3", Name: "ask_user", Arguments: `{"question":"Which branch?"}`}
	callLsLa                     = events.ToolCallRef{ID: "call_4", Name: "shell", Arguments: `{"command":"ls -la"}`}
	callCurl                     = events.ToolCallRef{ID: "call_5", Name: "shell", Arguments: `{"command":"curl example.com"}`}
	callPush                     = events.ToolCallRef{ID: "call_6", Name: "shell", Arguments: `{"command":"git push"}`}
)

// cases are the logs of the golden tests, by name; together they hold every
// event type of the catalog (TestCasesCoverTheCatalog).
var cases = map[string]func(t *testing.T) []events.Envelope{
	"reply": func(t *testing.T) []events.Envelope {
		return newLog(t, run1, "sess_chat-1", "hello").response(itm(1), "Hi there.").Completed("Hi there.").Events()
	},
	// Only responses with text become messages; tool items show nothing.
	"tools": func(t *testing.T) []events.Envelope {
		b := newLog(t, run1, "sess_chat-1", "list the files")
		b.response(itm(1), "Let me look.", callLs)
		b.ToolStarted(itm(2), itm(1), events.ItemCommandExecution, callLs)
		b.Add(events.Draft{Type: events.ItemDelta, ItemID: itm(2), Payload: events.ItemDeltaPayload{Delta: "README.md\n"}})
		b.completeTool(itm(2), events.ItemCommandExecution, callLs, "README.md\n")
		b.response(itm(3), "", callLs)
		b.ToolStarted(itm(4), itm(3), events.ItemCommandExecution, callLs)
		b.Add(events.Draft{Type: events.ItemFailed, ItemID: itm(4), Payload: events.ItemFailedPayload{
			ItemType: events.ItemCommandExecution, ErrorCode: events.ToolErrToolError, Message: "exit 2"}})
		b.response(itm(5), "There is one file: README.md.")
		return b.Completed("").Events()
	},
	// A provider plugin's sandbox shows nothing.
	"sandbox_attached": func(t *testing.T) []events.Envelope {
		b := newLog(t, run1, "sess_chat-1", "list the files")
		b.response(itm(1), "Let me look.", callLs)
		b.Add(events.Draft{Type: events.SandboxAttached, Payload: events.SandboxAttachedPayload{Provider: "local-process", SandboxID: "lp-1"}})
		b.ToolStarted(itm(2), itm(1), events.ItemCommandExecution, callLs)
		b.completeTool(itm(2), events.ItemCommandExecution, callLs, "README.md\n")
		b.response(itm(3), "There is one file: README.md.")
		return b.Completed("").Events()
	},
	"clarification": func(t *testing.T) []events.Envelope {
		b := newLog(t, run1, "sess_chat-1", "deploy")
		b.response(itm(1), "", callAsk)
		b.ToolStarted(itm(2), itm(1), events.ItemClarificationRequest, callAsk)
		b.Add(events.Draft{Type: events.RunPaused, Payload: events.RunPausedPayload{
			PauseReason: events.PauseAwaitingUserInput, ItemIDs: []string{itm(2)}}})
		cmd := b.command("AppendUserInput", "answer-1")
		b.completeTool(itm(2), events.ItemClarificationRequest, callAsk, "main")
		b.applied(cmd, "AppendUserInput", "answer-1", "")
		b.Add(events.Draft{Type: events.RunResumed})
		return b.response(itm(3), "Deploying main.").Completed("").Events()
	},
	// The answer comes while another run of the key holds it: the run
	// waits queued, then resumes; the queue shows nothing.
	"clarification_while_key_taken": func(t *testing.T) []events.Envelope {
		b := newLog(t, run1, "sess_chat-1", "deploy")
		b.response(itm(1), "", callAsk)
		b.ToolStarted(itm(2), itm(1), events.ItemClarificationRequest, callAsk)
		b.Add(events.Draft{Type: events.RunPaused, Payload: events.RunPausedPayload{
			PauseReason: events.PauseAwaitingUserInput, ItemIDs: []string{itm(2)}}})
		cmd := b.command("AppendUserInput", "answer-1")
		b.Queued(cmd, 1)
		b.completeTool(itm(2), events.ItemClarificationRequest, callAsk, "main")
		b.applied(cmd, "AppendUserInput", "answer-1", "")
		b.Add(events.Draft{Type: events.RunResumed})
		return b.response(itm(3), "Deploying main.").Completed("").Events()
	},
	// Three items wait for approval at once: one is denied (the run stays
	// paused), one allowed for the conversation, which also allows the third
	// (same tool and rule); a call policy forbids fails without a message.
	"approval": func(t *testing.T) []events.Envelope {
		b := newLog(t, run2, "sess_chat-2", "clean up")
		b.response(itm(1), "I need to run three commands.", callRm, callLs, callLsLa)
		b.awaitApproval(itm(2), itm(1), callRm, map[string]string{"command": "rm -rf build", "cwd": "/workspace"},
			"destructive-shell", "deletes files")
		b.awaitApproval(itm(3), itm(1), callLs, map[string]string{"command": "ls"}, "shell-any", "")
		b.awaitApproval(itm(5), itm(1), callLsLa, map[string]string{"command": "ls -la"}, "shell-any", "")
		b.ToolStarted(itm(6), itm(1), events.ItemCommandExecution, callCurl)
		b.Add(events.Draft{Type: events.ItemFailed, ItemID: itm(6), Payload: events.ItemFailedPayload{
			ItemType: events.ItemCommandExecution, ErrorCode: events.ToolErrBlockedByPolicy, Message: "no network"}})
		b.Add(events.Draft{Type: events.RunPaused, Payload: events.RunPausedPayload{
			PauseReason: events.PauseAwaitingApproval, ItemIDs: []string{itm(2), itm(3), itm(5)}}})
		b.decide(itm(2), "deny", "item", "Keep the build directory.")
		b.decide(itm(3), "allow", "platform_session", "")
		b.completeTool(itm(3), events.ItemCommandExecution, callLs, "build\n")
		b.completeTool(itm(5), events.ItemCommandExecution, callLsLa, "build\n")
		return b.response(itm(4), "I listed the files and left build/ alone.").Completed("").Events()
	},
	// Nobody decides within the pause TTL: the request expires, then the run.
	"approval_expired": func(t *testing.T) []events.Envelope {
		b := newLog(t, run1, "sess_chat-1", "push it")
		b.response(itm(1), "", callPush)
		b.awaitApproval(itm(2), itm(1), callPush, map[string]any{"command": "git push", "note": strings.Repeat("x", 600)}, "git-push", "pushes to a remote")
		b.Add(events.Draft{Type: events.RunPaused, Payload: events.RunPausedPayload{
			PauseReason: events.PauseAwaitingApproval, ItemIDs: []string{itm(2)}}})
		return b.Add(events.Draft{Type: events.ItemFailed, ItemID: itm(2), Payload: events.ItemFailedPayload{
			ItemType: events.ItemCommandExecution, ErrorCode: events.ToolErrExpired, Message: "nobody answered before the run's pause expired"}},
			events.Draft{Type: events.RunExpired, Payload: events.RunExpiredPayload{PauseReason: events.PauseAwaitingApproval,
				PausedAt: b.Last().OccurredAt, PauseTTLMs: 90 * 60_000}}).Events()
	},
	// A run without a platform session is its own conversation.
	"failed_without_session": func(t *testing.T) []events.Envelope {
		b := newLog(t, run3, "", "build it")
		b.response(itm(1), "Building.", callLs)
		b.ToolStarted(itm(2), itm(1), events.ItemCommandExecution, callLs)
		b.Add(events.Draft{Type: events.RunCheckpointRestored, Payload: events.CheckpointRestoredPayload{LastSeq: 6, OpenItems: []string{itm(2)}}},
			events.Draft{Type: events.ItemFailed, ItemID: itm(2), Payload: events.ItemFailedPayload{
				ItemType: events.ItemCommandExecution, ErrorCode: events.ToolErrRuntimeLost}},
			events.Draft{Type: events.RunFailed, Payload: events.RunFailedPayload{
				ErrorCode: events.FailModelError, Message: "the model provider answered 529 five times"}})
		return b.Events()
	},
	// A cancel mid-answer leaves a truncated reply; a follow-up on the
	// cancelled run starts the next run of the same conversation.
	"cancel_and_follow_up": func(t *testing.T) []events.Envelope {
		b := newLog(t, run5, "sess_chat-3", "explain the files")
		b.Add(events.Draft{Type: events.ItemStarted, ItemID: itm(1), Payload: events.ItemStartedPayload{ItemType: events.ItemAssistantMessage}},
			events.Draft{Type: events.ItemDelta, ItemID: itm(1), Payload: events.ItemDeltaPayload{Delta: "The files a"}})
		cancel := b.command("CancelRun", "stop-1")
		b.Add(events.Draft{Type: events.ItemCompleted, ItemID: itm(1), Payload: events.ItemCompletedPayload{
			ItemType: events.ItemAssistantMessage, Status: events.ItemStatusTruncated, Content: "The files a"}})
		b.applied(cancel, "CancelRun", "stop-1", "")
		b.Add(events.Draft{Type: events.RunCancelled, CommandID: cancel, Payload: events.RunCancelledPayload{Reason: "user pressed stop"}})
		b.applied(events.DerivedID("cmd", "follow-1"), "AppendUserInput", "follow-1", run4)
		next := newLog(t, run4, "sess_chat-3", "just the README")
		next.response(itm(2), "README.md explains the project.").Completed("")
		return append(b.Events(), next.Events()...)
	},
	"pauses_and_expiry": func(t *testing.T) []events.Envelope {
		b := newLog(t, run1, "sess_chat-1", "wait for it")
		b.Add(events.Draft{Type: events.RunPaused, Payload: events.RunPausedPayload{PauseReason: events.PauseAwaitingExternalToolResult}},
			events.Draft{Type: events.RunResumed},
			events.Draft{Type: events.RunPaused, Payload: events.RunPausedPayload{PauseReason: events.PauseAwaitingCheckpointRestore}},
			events.Draft{Type: events.RunExpired, Payload: events.RunExpiredPayload{PauseReason: events.PauseAwaitingCheckpointRestore}})
		return b.Events()
	},
	// Events no chat shows: commands refused or repeated, grants, compaction,
	// snapshots, steers, reasoning and plans.
	"silent": func(t *testing.T) []events.Envelope {
		b := newLog(t, run1, "sess_chat-1", "think")
		b.Add(events.Draft{Type: events.CapabilitySnapshotFrozen, Payload: events.SnapshotFrozenPayload{Hash: "sha256:ab", Snapshot: eventstest.Raw(map[string]int{"pauseTtlMs": 60000})}},
			events.Draft{Type: events.CommandRejected, CommandID: id("cmd", 1, "C"), Payload: events.CommandRejectedPayload{
				CommandType: "RequestCompaction", IdempotencyKey: "c-1", Code: "not_implemented"}},
			events.Draft{Type: events.CommandDuplicate, CommandID: id("cmd", 2, "C"), Payload: events.CommandDuplicatePayload{
				CommandType: "RequestCompaction", IdempotencyKey: "c-1", OriginalCommandID: id("cmd", 1, "C"), OriginalOutcome: "rejected"}},
			events.Draft{Type: events.PermissionGrantApplied, Payload: events.PermissionGrantPayload{GrantID: id("grt", 1, "G"), Scope: "run", ToolName: "shell", RuleID: "r"}},
			events.Draft{Type: events.ContextCompacted, Payload: events.ContextCompactedPayload{ArtifactID: id("cmp", 1, "C"), CutoffEventSeq: 3,
				TriggerReason: events.CompactManual, SourceRange: events.SeqRange{FromSeq: 1, ToSeq: 3}, TokenStats: events.TokenStats{BeforeTokens: 900, AfterTokens: 90}}})
		for i, typ := range []events.ItemType{events.ItemReasoning, events.ItemPlan, events.ItemUserMessage} {
			b.Add(events.Draft{Type: events.ItemStarted, ItemID: itm(10 + i), Payload: events.ItemStartedPayload{ItemType: typ, Content: "x"}},
				events.Draft{Type: events.ItemCompleted, ItemID: itm(10 + i), Payload: events.ItemCompletedPayload{ItemType: typ, Content: "visible only in the console"}})
		}
		cmd := b.command("CancelRun", "late-cancel")
		b.response(itm(1), "Thought it through.").Completed("")
		return b.Add(events.Draft{Type: events.CommandNoEffect, CommandID: cmd, Payload: events.CommandNoEffectPayload{
			CommandType: "CancelRun", IdempotencyKey: "late-cancel", Reason: "the run already completed"}},
			events.Draft{Type: events.PermissionGrantRevoked, Payload: events.PermissionGrantRevokedPayload{
				GrantID: id("grt", 1, "G"), Scope: "run", ToolName: "shell", RuleID: "r"}}).Events()
	},
}

// flattenAll flattens a log record by record, as the projector does.
func flattenAll(t *testing.T, evs []events.Envelope) []im.Message {
	t.Helper()
	out := []im.Message{}
	for _, e := range evs {
		m, ok, err := im.Flatten(e)
		if err != nil {
			t.Fatalf("flatten %s seq %d: %v", e.Type, e.Seq, err)
		}
		if ok {
			out = append(out, m)
		}
	}
	return out
}

func TestFlattenGolden(t *testing.T) {
	t.Parallel()
	for name, build := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			msgs := flattenAll(t, build(t))
			got, err := json.MarshalIndent(msgs, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			eventstest.Golden(t, filepath.Join("testdata", "flatten."+name+".golden.json"), append(got, '\n'))
			for _, m := range msgs {
				checkValid(t, m)
			}
		})
	}
}

// TestCasesCoverTheCatalog keeps the golden cases honest: every event type
// appears in some case, and every kind and status event in some output.
func TestCasesCoverTheCatalog(t *testing.T) {
	t.Parallel()
	types := map[events.Type]bool{}
	kinds := map[im.Kind]bool{}
	statuses := map[events.Type]bool{}
	for _, build := range cases {
		evs := build(t)
		for _, e := range evs {
			types[e.Type] = true
		}
		for _, m := range flattenAll(t, evs) {
			kinds[m.Kind] = true
			if m.Status != nil {
				statuses[m.Status.Event] = true
			}
		}
	}
	for _, typ := range events.Catalog() {
		if !types[typ] {
			t.Errorf("no golden case holds a %s event", typ)
		}
	}
	for _, k := range im.Kinds() {
		if !kinds[k] {
			t.Errorf("no golden case yields a %s message", k)
		}
	}
	for _, typ := range im.StatusEvents() {
		if !statuses[typ] {
			t.Errorf("no golden case yields a status message for %s", typ)
		}
	}
}

// TestFlattenIsDeterministic flattens every case twice, from separately
// built logs, and checks ids: derived from (runId, seq), unique.
func TestFlattenIsDeterministic(t *testing.T) {
	t.Parallel()
	seen := map[string]string{}
	for name, build := range cases {
		first, second := flattenAll(t, build(t)), flattenAll(t, build(t))
		if !slices.EqualFunc(first, second, sameMessage) {
			t.Errorf("%s: flattening the same events twice differs", name)
		}
		for _, m := range first {
			if want := im.MessageID(m.RunID, m.Seq); m.ID != want {
				t.Errorf("%s: message id %s, want MessageID(%s, %d) = %s", name, m.ID, m.RunID, m.Seq, want)
			}
			key := fmt.Sprintf("%s/%d", m.RunID, m.Seq)
			if other, ok := seen[m.ID]; ok && other != key {
				t.Errorf("id %s of %s also names %s", m.ID, key, other)
			}
			seen[m.ID] = key
		}
	}
	if im.MessageID(run1, 1) == im.MessageID(run1, 11) || im.MessageID(run1, 1) == im.MessageID(run2, 1) {
		t.Error("message ids collide across seqs or runs")
	}
}

func sameMessage(a, b im.Message) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}

// TestFlattenMalformedPayload returns an error, never a guess.
func TestFlattenMalformedPayload(t *testing.T) {
	t.Parallel()
	evs := newLog(t, run1, "", "x").Events()
	for _, tc := range []struct {
		typ     events.Type
		payload string
	}{
		{events.ItemCompleted, `{"itemType": 7}`},
		{events.ItemStarted, `{"itemType":"clarification_request","data":{"question":1}}`},
		{events.RunFailed, `[]`},
	} {
		e := evs[1]
		e.Type, e.ItemID, e.Payload = tc.typ, itm(1), json.RawMessage(tc.payload)
		if _, ok, err := im.Flatten(e); err == nil || ok {
			t.Errorf("%s %s: ok=%v err=%v, want an error", tc.typ, tc.payload, ok, err)
		}
	}
}

// TestFlattenUnknownType skips an event type from a newer catalog instead of
// failing on it, as readers ignore what they do not know.
func TestFlattenUnknownType(t *testing.T) {
	t.Parallel()
	e := newLog(t, run1, "", "x").Events()[1]
	e.Type, e.Payload = "runtime.run.teleported", json.RawMessage(`{"to":"mars"}`)
	if m, ok, err := im.Flatten(e); err != nil || ok {
		t.Errorf("Flatten(%s) = %+v, %v, %v; want no message and no error", e.Type, m, ok, err)
	}
}
