package commands_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
)

func TestInterruptKeepsOrDropsTheQueuedMessages(t *testing.T) {
	t.Parallel()
	for _, cancelQueued := range []bool{false, true} {
		t.Run(fmt.Sprint("cancelQueued=", cancelQueued), func(t *testing.T) {
			t.Parallel()
			st := stateOf(t, "running")
			for i, key := range []string{"msg-1", "msg-2"} {
				c, p := sessionMessage(t, st.RunID, key)
				p.Content = fmt.Sprint("message ", i)
				c.Payload, _ = json.Marshal(p)
				d := commands.AdmitSessionMessage(c, p, runs{st.RunID: st}.state, opts(allFeatures...)).Decision
				st = fold(t, *st, ev{typ: events.CommandAccepted, cmd: c.CommandID, p: d.Events[0].Payload})
			}
			c := newEnvelope(t, commands.CancelRun, commands.Header{RunID: st.RunID, PlatformSessionID: "ps:1",
				TenantID: tenant, Actor: actor, IdempotencyKey: "int-1"},
				&commands.CancelRunPayload{Interrupt: true, CancelQueued: cancelQueued})
			p, err := c.Validate()
			if err != nil {
				t.Fatal(err)
			}
			r := commands.AdmitInterrupt(c, p.(*commands.CancelRunPayload), runs{st.RunID: st}.state, opts(allFeatures...))
			if checkDecision(t, r.Decision, accepted); r.Decision.Then != commands.EffectInterrupt {
				t.Fatalf("then %v, want the run's step interrupted", r.Decision.Then)
			}
			st = fold(t, *st, ev{typ: events.CommandAccepted, cmd: c.CommandID, p: r.Decision.Events[0].Payload})
			cancel, _ := commands.PendingCancel(*st)
			drafts, send := commands.InterruptEvents(*st, cancel, nil, 1, 1)
			end := fold(t, *st, evs(drafts)...)
			if end.Status != events.StatusCancelled || len(end.Pending) != 0 {
				t.Fatalf("the run is %s with %d pending", end.Status, len(end.Pending))
			}
			if cancelQueued {
				if len(send) != 0 || end.NextRunID != "" {
					t.Fatalf("dropped messages made a next run: %+v", send)
				}
				return
			}
			if len(send) != 1 || end.NextRunID != send[0].RunID {
				t.Fatalf("sends %+v, next run %q", send, end.NextRunID)
			}
			cp, err := send[0].Validate()
			if err != nil {
				t.Fatal(err)
			}
			// The next run answers both messages: their input ids go with it.
			if in := cp.(*commands.CreateRunPayload); in.Input.Content != "message 0\n\nmessage 1" || in.ParentRunID != st.RunID ||
				!slices.Equal(in.InputIDs, []string{"msg-1", "msg-2"}) || in.InputID != "" {
				t.Errorf("the next run's create %+v", in)
			}
		})
	}
}

func TestInterruptOfAFinishedSessionHasNoEffect(t *testing.T) {
	t.Parallel()
	st := stateOf(t, "completed")
	c := newEnvelope(t, commands.CancelRun, commands.Header{RunID: st.RunID, PlatformSessionID: "ps:1",
		TenantID: tenant, Actor: actor, IdempotencyKey: "int-1"}, &commands.CancelRunPayload{Interrupt: true})
	p, _ := c.Validate()
	checkDecision(t, commands.AdmitInterrupt(c, p.(*commands.CancelRunPayload), runs{st.RunID: st}.state, opts(allFeatures...)).Decision, noEffect)
}

// evs turns drafts into fixture events.
func evs(drafts []events.Draft) []ev {
	out := make([]ev, len(drafts))
	for i, d := range drafts {
		out[i] = ev{typ: d.Type, item: d.ItemID, cmd: d.CommandID, p: d.Payload}
	}
	return out
}

func TestInterruptWaitsBehindTheNextRunsCreate(t *testing.T) {
	t.Parallel()
	next := events.NewID("run")
	first := followedUp(t, next)
	c := newEnvelope(t, commands.CancelRun, commands.Header{RunID: first.RunID, PlatformSessionID: "ps:1",
		TenantID: tenant, Actor: actor, IdempotencyKey: "int-1"}, &commands.CancelRunPayload{Interrupt: true})
	p, _ := c.Validate()
	state := runs{first.RunID: first}.state
	r := commands.AdmitInterrupt(c, p.(*commands.CancelRunPayload), state, opts(allFeatures...))
	if !r.Resend || len(r.Decision.Send) != 1 || len(r.Decision.Events) != 0 {
		t.Fatalf("resend %v, %d sends, %d events: want the interrupt sent again", r.Resend, len(r.Decision.Send), len(r.Decision.Events))
	}
	again := r.Decision.Send[0]
	ap, err := again.Validate()
	if err != nil || commands.Fingerprint(again) != commands.Fingerprint(c) {
		t.Fatalf("the interrupt sent again: %v", err)
	}
	// The create was refused: nothing to stop.
	r = commands.AdmitInterrupt(again, ap.(*commands.CancelRunPayload), state, opts(allFeatures...))
	checkDecision(t, r.Decision, noEffect)
	// The create was admitted: the new run is stopped.
	head := stateOf(t, "queued")
	r = commands.AdmitInterrupt(again, ap.(*commands.CancelRunPayload), runs{first.RunID: followedUp(t, head.RunID), head.RunID: head}.state, opts(allFeatures...))
	if checkDecision(t, r.Decision, applied); r.Command.RunID != head.RunID {
		t.Errorf("stopped %s, want %s", r.Command.RunID, head.RunID)
	}
}
