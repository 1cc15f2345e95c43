package commands_test

import (
	"testing"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
)

var sessionKey = events.SandboxKey{TenantID: tenant, WorkspaceID: "ws-1", AgentID: agent, OwnerID: "user:42"}

// sessionMessage is a validated session message to run runID under key.
func sessionMessage(t *testing.T, runID, key string) (commands.Envelope, *commands.AppendUserInputPayload) {
	t.Helper()
	sk := sessionKey
	c := newEnvelope(t, commands.AppendUserInput, commands.Header{RunID: runID, PlatformSessionID: "ps:1",
		TenantID: tenant, Actor: actor, IdempotencyKey: key},
		&commands.AppendUserInputPayload{Intent: commands.IntentAuto, Content: "and then?", AgentID: agent, SandboxKey: &sk})
	p, err := c.Validate()
	if err != nil {
		t.Fatalf("session message is invalid: %v", err)
	}
	return c, p.(*commands.AppendUserInputPayload)
}

// runs is a partition's run states for AdmitSessionMessage; a run it does
// not hold does not exist.
type runs map[string]*events.RunState

func (r runs) state(id string) *events.RunState {
	if st, ok := r[id]; ok {
		return st
	}
	return &events.RunState{}
}

// intentOf is what the decision says the message became.
func intentOf(d commands.Decision) string {
	for _, e := range d.Events {
		switch v := e.Payload.(type) {
		case events.CommandAcceptedPayload:
			return v.Intent
		case events.CommandAppliedPayload:
			return v.Intent
		case events.CommandDuplicatePayload:
			return v.OriginalIntent
		case events.RunAcceptedPayload:
			return commands.IntentFollowUp
		}
	}
	return ""
}

// TestSessionMessageRoutesByTheHeadsState is the routing table of
// docs/sessions.md: a session message is never invalid_state.
func TestSessionMessageRoutesByTheHeadsState(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		fixture string
		want    want
		intent  string
		then    commands.Effect
	}{
		{"queued", accepted, commands.IntentSteer, commands.EffectNone},
		{"running", accepted, commands.IntentSteer, commands.EffectNone},
		{"running/item awaiting approval", accepted, commands.IntentSteer, commands.EffectNone},
		{"paused/awaiting_user_input", accepted, commands.IntentClarification, commands.EffectWake},
		{"paused/awaiting_approval", accepted, commands.IntentQueued, commands.EffectNone},
		{"paused/awaiting_external_tool_result", accepted, commands.IntentQueued, commands.EffectNone},
		{"completed", applied, commands.IntentFollowUp, commands.EffectNone},
		{"failed", applied, commands.IntentFollowUp, commands.EffectNone},
		{"cancelled", applied, commands.IntentFollowUp, commands.EffectNone},
		{"expired", applied, commands.IntentFollowUp, commands.EffectNone},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			t.Parallel()
			st := stateOf(t, tc.fixture)
			c, p := sessionMessage(t, st.RunID, "msg-1")
			r := commands.AdmitSessionMessage(c, p, runs{st.RunID: st}.state, opts(allFeatures...))
			checkDecision(t, r.Decision, tc.want)
			if got := intentOf(r.Decision); got != tc.intent {
				t.Errorf("intent %q, want %q", got, tc.intent)
			}
			if r.Decision.Then != tc.then || r.Resend || r.Command.RunID != st.RunID {
				t.Errorf("then %v resend %v run %s, want %v on %s", r.Decision.Then, r.Resend, r.Command.RunID, tc.then, st.RunID)
			}
			if (len(r.Decision.Send) == 1) != (tc.intent == commands.IntentFollowUp) {
				t.Errorf("sends %d commands", len(r.Decision.Send))
			}
		})
	}
}

// followedUp is a finished run whose follow-up created run next.
func followedUp(t *testing.T, next string) *events.RunState {
	t.Helper()
	st := stateOf(t, "completed")
	return fold(t, *st, ev{typ: events.CommandApplied, cmd: events.NewID("cmd"), p: events.CommandAppliedPayload{
		CommandType: string(commands.AppendUserInput), IdempotencyKey: "fu-1", CreatedRunID: next}})
}

func TestSessionMessageFollowsTheChainToTheHead(t *testing.T) {
	t.Parallel()
	head := stateOf(t, "running")
	first := followedUp(t, head.RunID)
	if first.NextRunID != head.RunID {
		t.Fatalf("NextRunID = %q, want %s", first.NextRunID, head.RunID)
	}
	c, p := sessionMessage(t, first.RunID, "msg-1")
	r := commands.AdmitSessionMessage(c, p, runs{first.RunID: first, head.RunID: head}.state, opts(allFeatures...))
	checkDecision(t, r.Decision, accepted)
	if r.Command.RunID != head.RunID || intentOf(r.Decision) != commands.IntentSteer {
		t.Fatalf("routed to %s as %q, want a steer of %s", r.Command.RunID, intentOf(r.Decision), head.RunID)
	}
}

func TestSessionMessageRetryIsADuplicateOnTheRunItLanded(t *testing.T) {
	t.Parallel()
	head := stateOf(t, "running")
	first := followedUp(t, head.RunID)
	// The first attempt was a follow-up of first: its key is there.
	first = fold(t, *first, ev{typ: events.CommandApplied, cmd: events.NewID("cmd"), p: events.CommandAppliedPayload{
		CommandType: string(commands.AppendUserInput), IdempotencyKey: "msg-1", CreatedRunID: head.RunID,
		Intent: commands.IntentFollowUp}})
	c, p := sessionMessage(t, first.RunID, "msg-1")
	r := commands.AdmitSessionMessage(c, p, runs{first.RunID: first, head.RunID: head}.state, opts(allFeatures...))
	checkDecision(t, r.Decision, duplicated)
	if r.Command.RunID != first.RunID || intentOf(r.Decision) != commands.IntentFollowUp {
		t.Fatalf("answered on %s as %q, want the duplicate on %s", r.Command.RunID, intentOf(r.Decision), first.RunID)
	}
	if v := r.Decision.Events[0].Payload.(events.CommandDuplicatePayload); v.CreatedRunID != head.RunID {
		t.Errorf("duplicate names created run %q, want %s", v.CreatedRunID, head.RunID)
	}
}

func TestSessionMessageWaitsBehindTheNextRunsCreate(t *testing.T) {
	t.Parallel()
	next := events.NewID("run")
	first := followedUp(t, next) // next's CreateRun is still on the commands topic
	c, p := sessionMessage(t, first.RunID, "msg-1")
	state := runs{first.RunID: first}.state
	r := commands.AdmitSessionMessage(c, p, state, opts(allFeatures...))
	if !r.Resend || len(r.Decision.Events) != 0 || len(r.Decision.Send) != 1 {
		t.Fatalf("resend %v, %d events, %d sends; want the message sent again, nothing recorded",
			r.Resend, len(r.Decision.Events), len(r.Decision.Send))
	}
	again := r.Decision.Send[0]
	ap, err := again.Validate()
	if err != nil {
		t.Fatalf("the message sent again is invalid: %v", err)
	}
	if again.RunID != c.RunID || again.CommandID != c.CommandID || commands.Fingerprint(again) != commands.Fingerprint(c) ||
		ap.(*commands.AppendUserInputPayload).Behind != next {
		t.Fatalf("sent again to %s as %s, want the same command behind %s", again.RunID, again.CommandID, next)
	}
	// It comes back and the create was refused: the session goes on from first.
	r = commands.AdmitSessionMessage(again, ap.(*commands.AppendUserInputPayload), state, opts(allFeatures...))
	checkDecision(t, r.Decision, applied)
	if r.Command.RunID != first.RunID || intentOf(r.Decision) != commands.IntentFollowUp {
		t.Fatalf("routed to %s as %q, want a follow-up of %s", r.Command.RunID, intentOf(r.Decision), first.RunID)
	}
}

func TestSessionMessageCreatesTheSessionsFirstRun(t *testing.T) {
	t.Parallel()
	runID := commands.FirstSessionRunID(tenant, "ps:1", sessionKey, 1)
	c, p := sessionMessage(t, runID, "msg-1")
	r := commands.AdmitSessionMessage(c, p, runs{}.state, opts(allFeatures...))
	checkDecision(t, r.Decision, accepted)
	if r.Command.Type != commands.CreateRun || r.Decision.Then != commands.EffectEnqueue {
		t.Fatalf("became %s (then %v), want a CreateRun that is queued", r.Command.Type, r.Decision.Then)
	}
	st := fold(t, events.RunState{RunID: runID}, ev{typ: events.RunAccepted, cmd: c.CommandID, p: r.Decision.Events[0].Payload})
	// A retry is a duplicate of it, a second message a steer of it.
	r = commands.AdmitSessionMessage(c, p, runs{runID: st}.state, opts(allFeatures...))
	checkDecision(t, r.Decision, duplicated)
	if intentOf(r.Decision) != commands.IntentFollowUp {
		t.Errorf("the retry's original intent is %q", intentOf(r.Decision))
	}
	c2, p2 := sessionMessage(t, runID, "msg-2")
	r = commands.AdmitSessionMessage(c2, p2, runs{runID: st}.state, opts(allFeatures...))
	if checkDecision(t, r.Decision, accepted); intentOf(r.Decision) != commands.IntentSteer {
		t.Errorf("the second message became %q, want a steer", intentOf(r.Decision))
	}
}

func TestSessionMessageWithoutAgentOnANewSessionIsNotFound(t *testing.T) {
	t.Parallel()
	c, p := sessionMessage(t, commands.FirstSessionRunID(tenant, "ps:1", sessionKey, 1), "msg-1")
	p.AgentID = ""
	checkDecision(t, commands.AdmitSessionMessage(c, p, runs{}.state, opts(allFeatures...)).Decision, notFound)
}

// TestSessionMessageNeverCreatesAnUnknownRun: a message naming a run the
// executor does not know (forgotten, say) is not the session's first.
func TestSessionMessageNeverCreatesAnUnknownRun(t *testing.T) {
	t.Parallel()
	c, p := sessionMessage(t, events.NewID("run"), "msg-1")
	checkDecision(t, commands.AdmitSessionMessage(c, p, runs{}.state, opts(allFeatures...)).Decision, notFound)
}

func TestQueuedMessageIsAppliedAsASteer(t *testing.T) {
	t.Parallel()
	st := stateOf(t, "paused/awaiting_approval")
	c, p := sessionMessage(t, st.RunID, "msg-1")
	d := commands.AdmitSessionMessage(c, p, runs{st.RunID: st}.state, opts(allFeatures...)).Decision
	st = fold(t, *st, ev{typ: events.CommandAccepted, cmd: c.CommandID, p: d.Events[0].Payload},
		ev{typ: events.ApprovalDecisionSubmitted, item: awaitingItem, p: events.ApprovalDecisionPayload{Decision: events.DecisionAllow, Scope: "item"}},
		ev{typ: events.RunResumed})
	drafts := commands.SteerEvents(*st)
	if len(drafts) != 3 {
		t.Fatalf("%d steer drafts, want the user_message item and the applied outcome", len(drafts))
	}
	if v := drafts[2].Payload.(events.CommandAppliedPayload); v.Intent != commands.IntentSteer {
		t.Errorf("applied as %q, want steer", v.Intent)
	}
}

// TestSessionMessageFollowUpCarriesItsOptionsAndInputID: the next run a
// session message creates gets the message's options, and its stream
// reports the message's Idempotency-Key as the input it answers.
func TestSessionMessageFollowUpCarriesItsOptionsAndInputID(t *testing.T) {
	t.Parallel()
	done := stateOf(t, "completed")
	off := false
	opt := &events.RunOptions{SafetyMode: events.SafetyReadOnly, NetworkAccess: &off}
	sk := sessionKey
	c := newEnvelope(t, commands.AppendUserInput, commands.Header{RunID: done.RunID, PlatformSessionID: "ps:1",
		TenantID: tenant, Actor: actor, IdempotencyKey: "msg-7"},
		&commands.AppendUserInputPayload{Intent: commands.IntentAuto, Content: "and then?", AgentID: agent, SandboxKey: &sk, Options: opt})
	v, err := c.Validate()
	if err != nil {
		t.Fatal(err)
	}
	o := opts(allFeatures...)
	o.Partitions, o.Now = 4, 1_700_000_000_123
	r := commands.AdmitSessionMessage(c, v.(*commands.AppendUserInputPayload), runs{done.RunID: done}.state, o)
	if len(r.Decision.Send) != 1 {
		t.Fatalf("decision %+v, want the next run's CreateRun", r.Decision)
	}
	next, err := r.Decision.Send[0].Validate()
	if err != nil {
		t.Fatalf("the next run's CreateRun is invalid: %v", err)
	}
	create := next.(*commands.CreateRunPayload)
	if create.InputID != "msg-7" || create.Options == nil || create.Options.SafetyMode != events.SafetyReadOnly ||
		create.Options.NetworkAccess == nil || *create.Options.NetworkAccess {
		t.Fatalf("next run's create %+v, want input id msg-7 and the message's options", create)
	}
}
