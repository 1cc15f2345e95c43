package eventstest_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/events/eventstest"
)

var (
	run    = events.Identity{RunID: "run_01J0000000000000000000000A", TenantID: "acme", PlatformSessionID: "sess-1"}
	user   = events.Actor{Type: "user", ID: "u"}
	callRm = events.ToolCallRef{ID: "call_1", Name: "shell", Arguments: `{"command":"rm -rf build"}`}
	callLs = events.ToolCallRef{ID: "call_2", Name: "shell", Arguments: `{"command":"ls"}`}
)

// started is a log through runtime.run.started.
func started(t *testing.T, opts ...eventstest.Option) *eventstest.Log {
	t.Helper()
	return eventstest.New(t, run, opts...).
		Accepted("cmd_1", events.RunAcceptedPayload{AgentID: "a", Input: events.UserInput{Content: "hi"},
			IdempotencyKey: "k-1", Actor: user}).
		Started("ex-1")
}

func TestSealsSeqIDsAndTimes(t *testing.T) {
	t.Parallel()
	l := started(t, eventstest.Clock(5000, 250), eventstest.EmittedAfter(5))
	l.At(9000).Completed("done")
	want := []struct{ occurred int64 }{{5000}, {5250}, {9000}}
	evs := l.Events()
	if len(evs) != len(want) {
		t.Fatalf("%d events, want %d", len(evs), len(want))
	}
	for i, e := range evs {
		seq := int64(i + 1)
		switch {
		case e.Seq != seq || e.EventID != eventstest.EventID(run.RunID, seq):
			t.Errorf("event %d: seq %d id %s, want seq %d id %s", i, e.Seq, e.EventID, seq, eventstest.EventID(run.RunID, seq))
		case e.OccurredAt != want[i].occurred || e.EmittedAt != want[i].occurred+5:
			t.Errorf("seq %d: occurredAt %d emittedAt %d, want %d and %d", seq, e.OccurredAt, e.EmittedAt, want[i].occurred, want[i].occurred+5)
		case e.RunID != run.RunID || e.TenantID != run.TenantID || e.PlatformSessionID != run.PlatformSessionID:
			t.Errorf("seq %d names run %s tenant %s session %s", seq, e.RunID, e.TenantID, e.PlatformSessionID)
		}
	}
	if l.Now() != 9250 || l.State().Status != events.StatusCompleted || l.Last().Type != events.RunCompleted {
		t.Errorf("now %d, status %s, last %s", l.Now(), l.State().Status, l.Last().Type)
	}
}

func TestDefaultClockStartsAtEpoch(t *testing.T) {
	t.Parallel()
	evs := started(t).Events()
	if evs[0].OccurredAt != eventstest.Epoch || evs[1].OccurredAt != eventstest.Epoch+1000 || evs[1].EmittedAt != evs[1].OccurredAt {
		t.Errorf("times %d, %d (emitted %d), want Epoch and Epoch+1s", evs[0].OccurredAt, evs[1].OccurredAt, evs[1].EmittedAt)
	}
}

// TestSameCallsSameLog: nothing is random, so goldens may depend on a log.
func TestSameCallsSameLog(t *testing.T) {
	t.Parallel()
	build := func() []byte {
		l := started(t).Response("itm_1", events.AssistantData{ToolCalls: []events.ToolCallRef{callLs}}, "Let me ", "look.")
		l.ToolStarted("itm_2", "itm_1", events.ItemCommandExecution, callLs).
			ToolCompleted("itm_2", events.ItemCommandExecution, callLs, events.ToolResultData{Output: "README.md\n"}).
			Steer("itm_3", "cmd_2", "only the top level").Completed("one file")
		return eventstest.Raw(l.Events())
	}
	if a, b := build(), build(); string(a) != string(b) {
		t.Errorf("two builds differ:\n%s\n%s", a, b)
	}
}

// fatalTB records the first fatal failure and stops the goroutine, as
// testing.T does.
type fatalTB struct {
	*testing.T
	msg string
}

func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func (f *fatalTB) Fatal(args ...any) { f.Fatalf("%s", fmt.Sprint(args...)) }

func TestAnIllegalEventFailsTheTest(t *testing.T) {
	t.Parallel()
	tb := &fatalTB{T: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		// A run cannot start before it is accepted.
		eventstest.New(tb, run).Started("ex-1")
	}()
	<-done
	if !strings.Contains(tb.msg, "not a legal next event") {
		t.Errorf("failure %q, want an illegal event reported", tb.msg)
	}
}

func TestResponseToolsAndSteer(t *testing.T) {
	t.Parallel()
	ask := events.ToolCallRef{ID: "call_3", Name: "ask_user", Arguments: `{"question":"Which branch?"}`}
	l := started(t).Response("itm_1", events.AssistantData{Turn: 0, ToolCalls: []events.ToolCallRef{ask}}, "", "Asking.")
	l.ToolStarted("itm_2", "itm_1", events.ItemClarificationRequest, ask)
	types := []events.Type{}
	for _, e := range l.Events()[2:] {
		types = append(types, e.Type)
	}
	if want := "runtime.item.started runtime.item.delta runtime.item.completed runtime.item.started"; strings.Join(typeNames(types), " ") != want {
		t.Errorf("types %v, want %s (no delta for an empty part)", types, want)
	}
	var done events.ItemCompletedPayload
	decode(t, l.Events()[4], &done)
	if done.Content != "Asking." || done.Status != events.ItemStatusCompleted {
		t.Errorf("response completed %+v", done)
	}
	var start events.ItemStartedPayload
	decode(t, l.Last(), &start)
	var data events.ToolCallData
	if err := json.Unmarshal(start.Data, &data); err != nil || data.Question != "Which branch?" || data.ResponseItemID != "itm_1" {
		t.Errorf("clarification data %+v (%v), want the question and its response", data, err)
	}
}

func typeNames(ts []events.Type) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = string(t)
	}
	return out
}

func decode(t *testing.T, e events.Envelope, v any) {
	t.Helper()
	if err := json.Unmarshal(e.Payload, v); err != nil {
		t.Fatal(err)
	}
}

// awaitingTwo is a run paused with two shell calls awaiting approval under
// the same rule.
func awaitingTwo(t *testing.T) *eventstest.Log {
	t.Helper()
	l := started(t).Response(resp, events.AssistantData{ToolCalls: []events.ToolCallRef{callRm, callLs}}, "Two calls.")
	l.ToolStarted(toolRm, resp, events.ItemCommandExecution, callRm).Ask(toolRm, callRm, "shell-any", "needs a person")
	l.ToolStarted(toolLs, resp, events.ItemCommandExecution, callLs).Ask(toolLs, callLs, "shell-any", "needs a person")
	return l.Paused(events.PauseAwaitingApproval, toolRm, toolLs)
}

// The items of awaitingTwo: ids a command may name.
const (
	resp   = "itm_01J0000000000000000000001A"
	toolRm = "itm_01J0000000000000000000002A"
	toolLs = "itm_01J0000000000000000000003A"
)

// TestDecideAgreesWithAdmission: Decide appends what the executor's
// admission decides for the same SubmitApprovalDecision.
func TestDecideAgreesWithAdmission(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, decision, scope, reason string }{
		{"deny with a reason", events.DecisionDeny, events.ScopeItem, "not today"},
		{"deny without one", events.DecisionDeny, events.ScopeItem, ""},
		{"allow the item", events.DecisionAllow, events.ScopeItem, ""},
		{"allow the run", events.DecisionAllow, events.ScopeRun, "release"},
		{"allow the session", events.DecisionAllow, events.ScopePlatformSession, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			before := awaitingTwo(t)
			c, err := commands.New(commands.SubmitApprovalDecision, commands.Header{RunID: run.RunID, TenantID: run.TenantID, Actor: user},
				commands.SubmitApprovalDecisionPayload{ItemID: toolRm, Decision: tc.decision, Scope: tc.scope, Reason: tc.reason})
			if err != nil {
				t.Fatal(err)
			}
			payload, err := c.Validate()
			if err != nil {
				t.Fatal(err)
			}
			st := before.State()
			admitted := commands.Admit(&st, c, payload, commands.AdmitOptions{Implemented: func(string) bool { return true }})
			want := eventstest.New(t, run)
			for _, e := range before.Events() {
				want.Add(events.Draft{Type: e.Type, ItemID: e.ItemID, CommandID: e.CommandID, Payload: e.Payload})
			}
			want.Add(admitted.Events...)
			applied := commands.AppliedEvent(commands.Pending(c), "").Payload.(events.CommandAppliedPayload)
			got := before.Decide(eventstest.Decision{CommandID: c.CommandID, ItemID: toolRm, Decision: tc.decision,
				Scope: tc.scope, Reason: tc.reason, Actor: user, Applied: applied})
			if g, w := eventstest.Raw(got.Events()), eventstest.Raw(want.Events()); string(g) != string(w) {
				t.Errorf("Decide appended\n%s\nadmission decides\n%s", g, w)
			}
		})
	}
}

func TestApprovalIDIsAdmissions(t *testing.T) {
	t.Parallel()
	if got, want := eventstest.ApprovalID(run.RunID, "itm_2"), commands.ApprovalID(run.RunID, "itm_2"); got != want {
		t.Errorf("ApprovalID = %s, commands.ApprovalID = %s", got, want)
	}
}

func TestFirstFindsAnItemsEvent(t *testing.T) {
	t.Parallel()
	l := started(t).Response(resp, events.AssistantData{}, "a", "b")
	if d := l.First(events.ItemDelta, resp); d.Seq != 4 {
		t.Errorf("first delta at seq %d, want 4", d.Seq)
	}
	if s := l.First(events.RunStarted, ""); s.Seq != 2 {
		t.Errorf("run started at seq %d, want 2", s.Seq)
	}
}

func TestExpireAtTheDeadline(t *testing.T) {
	t.Parallel()
	snap := eventstest.Raw(map[string]any{"pauseTtlMs": 60_000})
	l := eventstest.New(t, run).
		Accepted("cmd_1", events.RunAcceptedPayload{AgentID: "a", IdempotencyKey: "k-1", Actor: user}).
		Add(events.Draft{Type: events.CapabilitySnapshotFrozen, Payload: events.SnapshotFrozenPayload{Hash: "sha256:ab", Snapshot: snap}}).
		Started("")
	l.Response("itm_1", events.AssistantData{ToolCalls: []events.ToolCallRef{callRm}})
	l.ToolStarted("itm_2", "itm_1", events.ItemCommandExecution, callRm).Ask("itm_2", callRm, "r", "")
	pausedAt := l.Paused(events.PauseAwaitingApproval, "itm_2").Last().OccurredAt
	l.Expire()
	evs := l.Events()
	failed, expired := evs[len(evs)-2], evs[len(evs)-1]
	var p events.RunExpiredPayload
	decode(t, expired, &p)
	switch {
	case failed.Type != events.ItemFailed || failed.ItemID != "itm_2" || failed.OccurredAt != pausedAt+60_000:
		t.Errorf("first of the expiry: %s %s at %d, want itm_2 failed at %d", failed.Type, failed.ItemID, failed.OccurredAt, pausedAt+60_000)
	case expired.Type != events.RunExpired || p.PausedAt != pausedAt || p.PauseTTLMs != 60_000:
		t.Errorf("last of the expiry: %s %+v", expired.Type, p)
	}
}

func TestCompactedCoversTheLogSoFar(t *testing.T) {
	t.Parallel()
	l := started(t).Compacted(events.ContextCompactedPayload{ArtifactID: "cmp_1", TriggerReason: events.CompactManual})
	var p events.ContextCompactedPayload
	decode(t, l.Last(), &p)
	if p.CutoffEventSeq != 2 || p.SourceRange != (events.SeqRange{FromSeq: 1, ToSeq: 2}) {
		t.Errorf("compaction covers %d %+v, want seq 1-2", p.CutoffEventSeq, p.SourceRange)
	}
}

func TestInterleaveKeepsEachRunsOrder(t *testing.T) {
	t.Parallel()
	a := started(t).Completed("").Events()
	b := eventstest.New(t, events.Identity{RunID: "run_b", TenantID: "acme"}).
		Accepted("cmd_b", events.RunAcceptedPayload{AgentID: "a", IdempotencyKey: "k-b"}).Events()
	var got []string
	for _, e := range eventstest.Interleave(a, b) {
		got = append(got, e.RunID[len(e.RunID)-1:]+string(rune('0'+e.Seq)))
	}
	if strings.Join(got, " ") != "A1 b1 A2 A3" {
		t.Errorf("interleaved %v, want A1 b1 A2 A3", got)
	}
}

func TestGoldenComparesWithTheFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "case.golden")
	if err := os.WriteFile(path, []byte("same\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	eventstest.Golden(t, path, []byte("same\n"))
	other := &errorTB{T: t}
	eventstest.Golden(other, path, []byte("other\n"))
	if !strings.Contains(other.msg, "differs") {
		t.Errorf("a different output reported %q, want a difference", other.msg)
	}
}

// errorTB records the last non-fatal failure instead of failing the test.
type errorTB struct {
	*testing.T
	msg string
}

func (e *errorTB) Errorf(format string, args ...any) { e.msg = fmt.Sprintf(format, args...) }
