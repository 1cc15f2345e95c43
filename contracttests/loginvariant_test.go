package contracttests_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/xbot-runtime/xbot/contracttests"
	"github.com/xbot-runtime/xbot/events"
)

var (
	runA = events.Identity{RunID: events.DerivedID("run", "contracttests", "a"), TenantID: "acme", PlatformSessionID: "sess_1"}
	runB = events.Identity{RunID: events.DerivedID("run", "contracttests", "b"), TenantID: "acme"}
)

// Drafts of a legal history, by name.
var (
	accepted = events.Draft{Type: events.RunAccepted, CommandID: "cmd_create", Payload: events.RunAcceptedPayload{
		AgentID: "demo", Input: events.UserInput{Content: "hi"}, IdempotencyKey: "k-create"}}
	started     = events.Draft{Type: events.RunStarted, Payload: events.RunStartedPayload{ExecutorID: "ex-1"}}
	itemStarted = events.Draft{Type: events.ItemStarted, ItemID: "itm_1", Payload: events.ItemStartedPayload{
		ItemType: events.ItemAssistantMessage}}
	itemDelta = events.Draft{Type: events.ItemDelta, ItemID: "itm_1", Payload: events.ItemDeltaPayload{Delta: "hel"}}
	itemDone  = events.Draft{Type: events.ItemCompleted, ItemID: "itm_1", Payload: events.ItemCompletedPayload{
		ItemType: events.ItemAssistantMessage, Content: "hello"}}
	completed = events.Draft{Type: events.RunCompleted, Payload: events.RunCompletedPayload{Output: "hello"}}
	failedBad = events.Draft{Type: events.RunFailed, Payload: events.RunFailedPayload{}} // errorCode missing
	rejected  = events.Draft{Type: events.CommandRejected, CommandID: "cmd_cancel", Payload: events.CommandRejectedPayload{
		CommandType: "SubmitApprovalDecision", IdempotencyKey: "k-approve", Code: "run_terminal"}}
	noEffect = events.Draft{Type: events.CommandNoEffect, CommandID: "cmd_cancel2", Payload: events.CommandNoEffectPayload{
		CommandType: "CancelRun", IdempotencyKey: "k-cancel"}}
	duplicate = events.Draft{Type: events.CommandDuplicate, CommandID: "cmd_create2", Payload: events.CommandDuplicatePayload{
		CommandType: "CreateRun", IdempotencyKey: "k-create", OriginalCommandID: "cmd_create", OriginalOutcome: "accepted"}}
	// followUpApplied is what a finished run records when a follow-up made
	// the session's next run.
	followUpApplied = events.Draft{Type: events.CommandApplied, CommandID: "cmd_follow", Payload: events.CommandAppliedPayload{
		CommandType: "AppendUserInput", IdempotencyKey: "follow-1"}}
)

// ev is one event of a handcrafted log: the draft sealed for run at seq.
type ev struct {
	run events.Identity
	seq int64
	d   events.Draft
}

func seal(t *testing.T, evs []ev) []events.Envelope {
	t.Helper()
	out := make([]events.Envelope, len(evs))
	for i, e := range evs {
		env, err := e.d.Seal(e.run, e.seq, events.DerivedID("evt", e.run.RunID, fmt.Sprint(i)), 1_700_000_000_000+int64(i))
		if err != nil {
			t.Fatal(err)
		}
		out[i] = env
	}
	return out
}

// seq numbers the drafts 1, 2, 3, … for run.
func seq(run events.Identity, ds ...events.Draft) []ev {
	out := make([]ev, len(ds))
	for i, d := range ds {
		out[i] = ev{run, int64(i + 1), d}
	}
	return out
}

// at is a violation CheckLog must report.
type at struct {
	run events.Identity
	seq int64
}

// violations splits CheckLog's joined error into one error per violation.
func violations(err error) []error {
	if err == nil {
		return nil
	}
	var joined interface{ Unwrap() []error }
	if errors.As(err, &joined) {
		return joined.Unwrap()
	}
	return []error{err}
}

// names reports whether err names run and seq: its message holds the run id
// and "seq N" (or, for a seq gap, the unexpected seq as SeqGapError.Actual).
func names(err error, w at) bool {
	msg := err.Error()
	if !strings.Contains(msg, w.run.RunID) {
		return false
	}
	var gap *events.SeqGapError
	if errors.As(err, &gap) {
		return gap.RunID == w.run.RunID && gap.Actual == w.seq
	}
	return strings.Contains(msg, fmt.Sprintf("seq %d", w.seq))
}

func TestCheckLog(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		log    []ev
		want   []at                              // violations, in log order
		status map[events.Identity]events.Status // folded states that must hold
	}{
		{
			name:   "clean run",
			log:    seq(runA, accepted, started, itemStarted, itemDelta, itemDelta, itemDone, completed),
			status: map[events.Identity]events.Status{runA: events.StatusCompleted},
		},
		{
			name: "empty log",
		},
		{
			name: "gap",
			log:  []ev{{runA, 1, accepted}, {runA, 2, started}, {runA, 4, itemStarted}},
			want: []at{{runA, 4}},
		},
		{
			name: "log not starting at seq 1",
			log:  []ev{{runA, 2, accepted}},
			want: []at{{runA, 2}},
		},
		{
			name: "duplicate seq",
			log:  []ev{{runA, 1, accepted}, {runA, 2, started}, {runA, 2, started}, {runA, 3, itemStarted}},
			want: []at{{runA, 2}},
		},
		{
			name: "illegal transition",
			log:  seq(runA, accepted, completed),
			want: []at{{runA, 2}},
		},
		{
			name: "run ends with an open item",
			log:  seq(runA, accepted, started, itemStarted, completed),
			want: []at{{runA, 4}},
		},
		{
			name: "item started after completed",
			log:  seq(runA, accepted, started, completed, itemStarted),
			want: []at{{runA, 4}},
		},
		{
			name: "run started again after completed",
			log:  seq(runA, accepted, started, completed, started),
			want: []at{{runA, 4}},
		},
		{
			name:   "outcomes that change nothing after terminal",
			log:    seq(runA, accepted, started, completed, rejected, noEffect, duplicate, followUpApplied),
			status: map[events.Identity]events.Status{runA: events.StatusCompleted},
		},
		{
			name: "outcome after terminal still needs the next seq",
			log:  []ev{{runA, 1, accepted}, {runA, 2, started}, {runA, 3, completed}, {runA, 5, rejected}},
			want: []at{{runA, 5}},
		},
		{
			name: "malformed payload",
			log:  seq(runA, accepted, started, failedBad),
			want: []at{{runA, 3}},
		},
		{
			name: "interleaved runs, both clean",
			log: []ev{
				{runA, 1, accepted}, {runB, 1, accepted}, {runB, 2, started}, {runA, 2, started},
				{runB, 3, completed}, {runA, 3, itemStarted}, {runB, 4, rejected}, {runA, 4, itemDone}, {runA, 5, completed},
			},
			status: map[events.Identity]events.Status{runA: events.StatusCompleted, runB: events.StatusCompleted},
		},
		{
			name: "interleaved runs, one broken",
			log: []ev{
				{runA, 1, accepted}, {runB, 1, accepted}, {runB, 3, started}, {runA, 2, started},
				{runB, 4, completed}, {runA, 3, completed},
			},
			want:   []at{{runB, 3}},
			status: map[events.Identity]events.Status{runA: events.StatusCompleted},
		},
		{
			name: "interleaved runs, both broken, one report each",
			log: []ev{
				{runA, 1, accepted}, {runB, 1, accepted}, {runA, 2, completed}, {runB, 2, started},
				{runB, 3, completed}, {runA, 3, started}, {runB, 4, itemStarted}, {runA, 4, completed},
			},
			want: []at{{runA, 2}, {runB, 4}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			states, err := contracttests.CheckLog(seal(t, tt.log))
			got := violations(err)
			if len(got) != len(tt.want) {
				t.Fatalf("CheckLog reported %d violations, want %d: %v", len(got), len(tt.want), err)
			}
			for i, w := range tt.want {
				if !names(got[i], w) {
					t.Errorf("violation %d = %q, want one naming run %s seq %d", i, got[i], w.run.RunID, w.seq)
				}
			}
			for run, want := range tt.status {
				if st := states[run.RunID]; st.Status != want || st.RunID != run.RunID {
					t.Errorf("run %s folded to %q, want %q", run.RunID, st.Status, want)
				}
			}
		})
	}
}

func TestCheckLogFoldsStates(t *testing.T) {
	t.Parallel()
	states, err := contracttests.CheckLog(seal(t, append(
		seq(runA, accepted, started, itemStarted, itemDone, completed, noEffect),
		seq(runB, accepted)...)))
	if err != nil {
		t.Fatal(err)
	}
	a := states[runA.RunID]
	if a.LastSeq != 6 || a.TenantID != "acme" || a.PlatformSessionID != "sess_1" || a.AgentID != "demo" {
		t.Errorf("run A folded to %+v", a)
	}
	if it, ok := a.Item("itm_1"); !ok || it.Status != events.ItemStatusCompleted {
		t.Errorf("run A item = %+v, %v", it, ok)
	}
	if b := states[runB.RunID]; b.Status != events.StatusQueued || b.LastSeq != 1 {
		t.Errorf("run B folded to %+v", b)
	}
	want := []string{runA.RunID, runB.RunID}
	if want[0] > want[1] {
		want[0], want[1] = want[1], want[0]
	}
	if got := contracttests.RunIDs(states); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("RunIDs = %v, want %v", got, want)
	}
}
