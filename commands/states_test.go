package commands_test

import (
	"testing"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
)

// Fixed identities of the fixture histories.
var (
	createKey   = "create-1"
	createCmd   = events.NewID("cmd")
	cancelKey   = "cancel-1"
	cancelCmd   = events.NewID("cmd")
	startedItem = events.NewID("itm")
	askItem     = events.NewID("itm")
)

// ev is one event of a fixture history.
type ev struct {
	typ  events.Type
	item string
	cmd  string
	p    any
}

var (
	evAccepted = ev{typ: events.RunAccepted, cmd: createCmd, p: events.RunAcceptedPayload{
		AgentID: agent, Input: events.UserInput{Content: "hi"}, IdempotencyKey: createKey, Actor: actor,
		SandboxKey: events.SandboxKey{TenantID: tenant, WorkspaceID: "ws-1", AgentID: agent, OwnerID: "user:42"}}}
	evStarted       = ev{typ: events.RunStarted}
	evCancelPending = ev{typ: events.CommandAccepted, cmd: cancelCmd,
		p: events.CommandAcceptedPayload{CommandType: string(commands.CancelRun), IdempotencyKey: cancelKey}}
)

func evPaused(r events.PauseReason, items ...string) ev {
	return ev{typ: events.RunPaused, p: events.RunPausedPayload{PauseReason: r, ItemIDs: items}}
}

func evItemStarted(id string, typ events.ItemType) ev {
	return ev{typ: events.ItemStarted, item: id, p: events.ItemStartedPayload{ItemType: typ}}
}

func evItemAwaiting(id string) ev {
	return ev{typ: events.ItemAwaitingApproval, item: id, p: events.ItemAwaitingApprovalPayload{ItemType: events.ItemToolCall, ToolName: "shell"}}
}

func evItemCompleted(id string, typ events.ItemType) ev {
	return ev{typ: events.ItemCompleted, item: id, p: events.ItemCompletedPayload{ItemType: typ}}
}

// fixture is a run state of the admission tests, reached by folding a legal
// history of real events.
type fixture struct {
	status  events.Status
	history []ev
}

var (
	evCompleted = ev{typ: events.RunCompleted, p: events.RunCompletedPayload{Output: "done"}}
	evFailed    = ev{typ: events.RunFailed, p: events.RunFailedPayload{ErrorCode: events.FailModelError}}
	evCancelled = ev{typ: events.RunCancelled, p: events.RunCancelledPayload{Reason: "stop"}}
	evExpired   = ev{typ: events.RunExpired}

	running      = []ev{evAccepted, evStarted}
	awaitingTool = []ev{evItemStarted(awaitingItem, events.ItemToolCall), evItemAwaiting(awaitingItem)}
	askedUser    = []ev{evItemStarted(askItem, events.ItemClarificationRequest),
		evItemCompleted(askItem, events.ItemClarificationRequest), evPaused(events.PauseAwaitingUserInput)}
)

var fixtures = map[string]fixture{
	"nonexistent":                    {events.StatusCreated, nil},
	"queued":                         {events.StatusQueued, []ev{evAccepted}},
	"running":                        {events.StatusRunning, running},
	"running/cancel pending":         {events.StatusRunning, then(running, evCancelPending)},
	"running/item awaiting approval": {events.StatusRunning, then(running, awaitingTool...)},
	"paused/awaiting_approval": {events.StatusPaused, then(then(running, awaitingTool...),
		evItemStarted(startedItem, events.ItemToolCall), evPaused(events.PauseAwaitingApproval, awaitingItem))},
	"paused/awaiting_user_input": {events.StatusPaused, then(running, askedUser...)},
	"paused/awaiting_user_input with an item awaiting approval": {events.StatusPaused,
		then(then(running, awaitingTool...), evPaused(events.PauseAwaitingUserInput))},
	"paused/awaiting_external_tool_result": {events.StatusPaused, then(running, evPaused(events.PauseAwaitingExternalToolResult))},
	"completed":                            {events.StatusCompleted, then(running, evCompleted)},
	"failed":                               {events.StatusFailed, then(running, evFailed)},
	"cancelled":                            {events.StatusCancelled, []ev{evAccepted, evCancelled}},
	"expired":                              {events.StatusExpired, then(then(running, askedUser...), evExpired)},
}

// then returns h followed by more, without touching h.
func then(h []ev, more ...ev) []ev { return append(append([]ev(nil), h...), more...) }

// stateOf folds the named history for a fresh run id.
func stateOf(t *testing.T, name string) *events.RunState {
	t.Helper()
	f, ok := fixtures[name]
	if !ok {
		t.Fatalf("no fixture %q", name)
	}
	st := fold(t, events.RunState{RunID: events.NewID("run")}, f.history...)
	if st.CurrentStatus() != f.status {
		t.Fatalf("fixture %q reached %s, want %s", name, st.CurrentStatus(), f.status)
	}
	return st
}

// fold appends evs to st with events.Fold, as the executor would. st.RunID
// names the run; its tenant is the fixture tenant.
func fold(t *testing.T, st events.RunState, evs ...ev) *events.RunState {
	t.Helper()
	id := events.Identity{RunID: st.RunID, TenantID: tenant, PlatformSessionID: "ps:1"}
	for _, e := range evs {
		env, err := events.Draft{Type: e.typ, ItemID: e.item, CommandID: e.cmd, Payload: e.p}.
			Seal(id, st.LastSeq+1, events.NewID("evt"), 1_700_000_000_000)
		if err != nil {
			t.Fatalf("seal %s: %v", e.typ, err)
		}
		if st, err = events.Fold(st, env); err != nil {
			t.Fatalf("fold %s: %v", e.typ, err)
		}
	}
	return &st
}

func TestFixtureHistoriesFold(t *testing.T) {
	t.Parallel()
	for name := range fixtures {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			st := stateOf(t, name)
			if st.Exists() != (name != "nonexistent") {
				t.Fatalf("Exists() = %v", st.Exists())
			}
		})
	}
}
