package events_test

import (
	"reflect"
	"testing"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/events/eventstest"
)

// forkPrefix is a running run with two open tool items and a pending
// command: the state every branch of TestAFoldLeavesItsStartingStateAlone
// folds from.
func forkPrefix(t *testing.T) *eventstest.Log {
	t.Helper()
	a := events.ToolCallRef{ID: "call_a", Name: "shell", Arguments: `{"command":"a"}`}
	b := events.ToolCallRef{ID: "call_b", Name: "shell", Arguments: `{"command":"b"}`}
	return eventstest.New(t, events.Identity{RunID: "run_fork", TenantID: "acme"}).
		Accepted("cmd_create", events.RunAcceptedPayload{AgentID: "coder", IdempotencyKey: "k-create",
			Actor: events.Actor{Type: "user", ID: "u"}}).
		Started("").
		Response("itm_m0", events.AssistantData{ToolCalls: []events.ToolCallRef{a, b}, FinishReason: "tool_calls"}, "ok").
		ToolStarted("itm_xa", "itm_m0", events.ItemCommandExecution, a).
		ToolStarted("itm_xb", "itm_m0", events.ItemCommandExecution, b).
		CommandAccepted("cmd_steer", events.CommandAcceptedPayload{CommandType: "AppendUserInput",
			IdempotencyKey: "k-steer"})
}

// TestAFoldLeavesItsStartingStateAlone: Fold shares what an event leaves
// alone with the state it folds from, and copies what it changes, so
// folding one state several ways (a batch retried, a fold tried) never
// changes the state or another branch.
func TestAFoldLeavesItsStartingStateAlone(t *testing.T) {
	t.Parallel()
	base := forkPrefix(t).State()
	before := base.Clone()
	a := events.ToolCallRef{ID: "call_a", Name: "shell", Arguments: `{"command":"a"}`}
	b := events.ToolCallRef{ID: "call_b", Name: "shell", Arguments: `{"command":"b"}`}
	branches := map[string]func(*eventstest.Log){
		"an item completes": func(l *eventstest.Log) {
			l.ToolCompleted("itm_xa", events.ItemCommandExecution, a, events.ToolResultData{Output: "a"})
		},
		"the other item completes": func(l *eventstest.Log) {
			l.ToolCompleted("itm_xb", events.ItemCommandExecution, b, events.ToolResultData{Output: "b"})
		},
		"an item starts": func(l *eventstest.Log) {
			l.ItemStarted("itm_note1", events.ItemAssistantMessage, nil)
		},
		"another item starts": func(l *eventstest.Log) {
			l.ItemStarted("itm_note2", events.ItemReasoning, nil)
		},
		"the pending command applies": func(l *eventstest.Log) {
			l.CommandApplied("cmd_steer", events.CommandAppliedPayload{CommandType: "AppendUserInput",
				IdempotencyKey: "k-steer"})
		},
		"a new command is accepted": func(l *eventstest.Log) {
			l.CommandAccepted("cmd_other", events.CommandAcceptedPayload{CommandType: "AppendUserInput",
				IdempotencyKey: "k-other"})
		},
	}
	folded := map[string]events.RunState{}
	for name, step := range branches {
		l := forkPrefix(t)
		step(l)
		got, err := events.Fold(base, l.Last())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(got, l.State()) {
			t.Errorf("%s: folded onto the shared state\n%+v\nwant\n%+v", name, got, l.State())
		}
		if !reflect.DeepEqual(base, *before) {
			t.Fatalf("%s changed the state it was folded from:\n%+v\nwas\n%+v", name, base, *before)
		}
		folded[name] = got
	}
	// Each branch still holds what it folded once all of them were folded.
	for name, step := range branches {
		l := forkPrefix(t)
		step(l)
		if !reflect.DeepEqual(folded[name], l.State()) {
			t.Errorf("%s: changed by a later branch:\n%+v\nwant\n%+v", name, folded[name], l.State())
		}
	}
}
