package commands_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
)

// evPending is command typ with payload p accepted for a safe point.
func evPending(t *testing.T, cmd string, typ commands.Type, p any) ev {
	t.Helper()
	raw, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return ev{typ: events.CommandAccepted, cmd: cmd, p: events.CommandAcceptedPayload{CommandType: string(typ),
		IdempotencyKey: "key-" + cmd, Command: raw}}
}

func steer(t *testing.T, cmd string) ev {
	return evPending(t, cmd, commands.AppendUserInput, commands.AppendUserInputPayload{Intent: commands.IntentSteer, Content: "also " + cmd})
}

// foldDrafts appends drafts to st as the executor would and returns the
// state they lead to.
func foldDrafts(t *testing.T, st events.RunState, drafts []events.Draft) events.RunState {
	t.Helper()
	for _, d := range drafts {
		env, err := d.Seal(events.Identity{RunID: st.RunID, TenantID: tenant}, st.LastSeq+1, events.NewID("evt"), 1)
		if err != nil {
			t.Fatal(err)
		}
		if st, err = events.Fold(st, env); err != nil {
			t.Fatalf("%s does not fold: %v", d.Type, err)
		}
	}
	return st
}

func draftCommands(ds []events.Draft) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.CommandID)
	}
	return out
}

// TestSteerEvents: every pending steer applies, in the order accepted, as a
// user_message item; other pending commands stay.
func TestSteerEvents(t *testing.T) {
	t.Parallel()
	st := fold(t, *stateOf(t, "running"), steer(t, "cmd_s1"),
		evPending(t, "cmd_c1", commands.RequestCompaction, commands.RequestCompactionPayload{}), steer(t, "cmd_s2"))
	drafts := commands.SteerEvents(*st)
	want := []events.Type{events.ItemStarted, events.ItemCompleted, events.CommandApplied,
		events.ItemStarted, events.ItemCompleted, events.CommandApplied}
	if got := draftTypes(drafts); !slices.Equal(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	if got := draftCommands(drafts); !slices.Equal(got, []string{"cmd_s1", "cmd_s1", "cmd_s1", "cmd_s2", "cmd_s2", "cmd_s2"}) {
		t.Fatalf("commands %v", got)
	}
	next := foldDrafts(t, *st, drafts)
	if len(next.Pending) != 1 || next.Pending[0].CommandID != "cmd_c1" {
		t.Fatalf("pending after the steers: %+v", next.Pending)
	}
}

// TestCancelEvents: a cancel records the unstarted calls, fails the open
// items, applies, cancels the run and closes the other pending commands.
func TestCancelEvents(t *testing.T) {
	t.Parallel()
	st := fold(t, *stateOf(t, "running"), evItemStarted(startedItem, events.ItemToolCall), steer(t, "cmd_s1"),
		evPending(t, "cmd_x", commands.CancelRun, commands.CancelRunPayload{Reason: "stop"}))
	p, ok := commands.PendingCancel(*st)
	if !ok || p.CommandID != "cmd_x" {
		t.Fatalf("pending cancel %+v, %v", p, ok)
	}
	unstarted := []events.Draft{
		{Type: events.ItemStarted, ItemID: "itm_call", Payload: events.ItemStartedPayload{ItemType: events.ItemToolCall}},
		{Type: events.ItemFailed, ItemID: "itm_call", Payload: events.ItemFailedPayload{ItemType: events.ItemToolCall,
			ErrorCode: events.ToolErrCancelled, Message: "cancelled"}},
	}
	drafts := commands.CancelEvents(*st, p, unstarted)
	want := []events.Type{events.ItemStarted, events.ItemFailed, events.ItemFailed, events.CommandApplied,
		events.RunCancelled, events.CommandNoEffect}
	if got := draftTypes(drafts); !slices.Equal(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	if c, ok := drafts[4].Payload.(events.RunCancelledPayload); !ok || c.Reason != "stop" {
		t.Fatalf("cancelled %+v, want the cancel's reason", drafts[4].Payload)
	}
	next := foldDrafts(t, *st, drafts)
	if next.Status != events.StatusCancelled || len(next.Pending) != 0 || len(next.OpenItems()) != 0 {
		t.Fatalf("after the cancel: %s, pending %d, open %d", next.Status, len(next.Pending), len(next.OpenItems()))
	}
}

// TestClarificationEvents: a clarification answers the open question it
// names and resumes the run; one that names no open question is kept as a
// user message after resuming.
func TestClarificationEvents(t *testing.T) {
	t.Parallel()
	answer := func(it events.ItemRef, content string) events.Draft {
		return events.Draft{Type: events.ItemCompleted, ItemID: it.ID, Payload: events.ItemCompletedPayload{
			ItemType: it.Type, Status: events.ItemStatusCompleted, Content: content}}
	}
	cases := []struct {
		name        string
		interaction string
		want        []events.Type
	}{
		{"any question", "", []events.Type{events.ItemCompleted, events.CommandApplied, events.RunResumed}},
		{"the open question", askItem, []events.Type{events.ItemCompleted, events.CommandApplied, events.RunResumed}},
		{"no open question", "itm_other", []events.Type{events.CommandApplied, events.RunResumed,
			events.ItemStarted, events.ItemCompleted}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			st := fold(t, *stateOf(t, "running"), evItemStarted(askItem, events.ItemClarificationRequest),
				evPaused(events.PauseAwaitingUserInput), evPending(t, "cmd_a", commands.AppendUserInput,
					commands.AppendUserInputPayload{Intent: commands.IntentClarification, Content: "blue", InteractionID: tc.interaction}))
			drafts, ok := commands.ClarificationEvents(*st, answer)
			if !ok {
				t.Fatal("no clarification found")
			}
			if got := draftTypes(drafts); !slices.Equal(got, tc.want) {
				t.Fatalf("events %v, want %v", got, tc.want)
			}
			if next := foldDrafts(t, *st, drafts); next.Status != events.StatusRunning || len(next.Pending) != 0 {
				t.Fatalf("after the answer: %s, pending %d", next.Status, len(next.Pending))
			}
		})
	}
	if _, ok := commands.ClarificationEvents(*stateOf(t, "paused/awaiting_user_input"), answer); ok {
		t.Fatal("a clarification was found where none is pending")
	}
}

// TestCompactionEvents: an artifact, the RequestCompaction it answers, or
// both; at the end of a run every pending compaction closes without effect.
func TestCompactionEvents(t *testing.T) {
	t.Parallel()
	manual := events.PendingCommand{CommandID: "cmd_c1", Type: string(commands.RequestCompaction)}
	art := &events.ContextCompactedPayload{}
	cases := []struct {
		name   string
		art    *events.ContextCompactedPayload
		manual *events.PendingCommand
		want   []events.Type
		cmds   []string
	}{
		{"nothing", nil, nil, nil, nil},
		{"automatic", art, nil, []events.Type{events.ContextCompacted}, []string{""}},
		{"manual", art, &manual, []events.Type{events.ContextCompacted, events.CommandApplied}, []string{"cmd_c1", "cmd_c1"}},
		{"manual, failed", nil, &manual, []events.Type{events.CommandNoEffect}, []string{"cmd_c1"}},
	}
	for _, tc := range cases {
		drafts := commands.CompactionEvents(tc.art, tc.manual, "too short")
		if got := draftTypes(drafts); !slices.Equal(got, tc.want) {
			t.Errorf("%s: events %v, want %v", tc.name, got, tc.want)
		}
		if got := draftCommands(drafts); !slices.Equal(got, tc.cmds) {
			t.Errorf("%s: commands %v, want %v", tc.name, got, tc.cmds)
		}
	}
	st := fold(t, *stateOf(t, "running"), evPending(t, "cmd_c1", commands.RequestCompaction, commands.RequestCompactionPayload{}),
		steer(t, "cmd_s1"))
	if got := draftTypes(commands.UnneededCompactions(*st)); !slices.Equal(got, []events.Type{events.CommandNoEffect}) {
		t.Fatalf("unneeded compactions: %v", got)
	}
	if p, ok := commands.PendingCompaction(*st); !ok || p.CommandID != "cmd_c1" {
		t.Fatalf("pending compaction %+v, %v", p, ok)
	}
}
