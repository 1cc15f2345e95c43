package commands_test

import (
	"slices"
	"testing"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
)

// TestDeciders pins, per command type, the events a decision appends (their
// types, in order), what the executor does next, and what it sends.
func TestDeciders(t *testing.T) {
	t.Parallel()
	deny := cmdSpec{"SubmitApprovalDecision/deny", commands.SubmitApprovalDecision,
		&commands.SubmitApprovalDecisionPayload{ItemID: awaitingItem, Decision: events.DecisionDeny, Scope: "item"}}
	cases := []struct {
		state string
		spec  cmdSpec
		want  []events.Type
		then  commands.Effect
		sends int
	}{
		{"nonexistent", createSpec(agent), []events.Type{events.RunAccepted}, commands.EffectEnqueue, 0},
		{"running", createSpec(agent), []events.Type{events.CommandRejected}, commands.EffectNone, 0},
		{"running", cancelSpec, []events.Type{events.CommandAccepted}, commands.EffectInterrupt, 0},
		{"running/cancel pending", cancelSpec, []events.Type{events.CommandNoEffect}, commands.EffectNone, 0},
		{"queued", cancelSpec, []events.Type{events.CommandApplied, events.RunCancelled}, commands.EffectNone, 0},
		{"paused/awaiting_approval", cancelSpec, []events.Type{events.ItemFailed, events.ItemFailed,
			events.CommandApplied, events.RunCancelled}, commands.EffectNone, 0},
		{"completed", cancelSpec, []events.Type{events.CommandNoEffect}, commands.EffectNone, 0},
		{"running", inputSpec(commands.IntentSteer), []events.Type{events.CommandAccepted}, commands.EffectNone, 0},
		{"paused/awaiting_user_input", inputSpec(commands.IntentClarification), []events.Type{events.CommandAccepted},
			commands.EffectWake, 0},
		{"completed", inputSpec(commands.IntentFollowUp), []events.Type{events.CommandApplied}, commands.EffectNone, 1},
		{"running", inputSpec(commands.IntentFollowUp), []events.Type{events.CommandRejected}, commands.EffectNone, 0},
		{"paused/awaiting_approval", approveSpec(awaitingItem), []events.Type{events.ApprovalDecisionSubmitted,
			events.CommandApplied, events.RunResumed}, commands.EffectWake, 0},
		{"paused/awaiting_approval", deny, []events.Type{events.ApprovalDecisionSubmitted, events.ItemFailed,
			events.CommandApplied, events.RunResumed}, commands.EffectWake, 0},
		{"running", compactSpec, []events.Type{events.CommandAccepted}, commands.EffectNone, 0},
		{"paused/awaiting_user_input", compactSpec, []events.Type{events.CommandAccepted}, commands.EffectWake, 0},
		{"queued", compactSpec, []events.Type{events.CommandRejected}, commands.EffectNone, 0},
	}
	for _, tc := range cases {
		t.Run(tc.state+"/"+tc.spec.name, func(t *testing.T) {
			t.Parallel()
			st := stateOf(t, tc.state)
			c, p := admitEnvelope(t, st, tc.spec, tenant, "")
			d := admit(t, st, c, p, opts(allFeatures...))
			if got := draftTypes(d.Events); !slices.Equal(got, tc.want) {
				t.Errorf("events %v, want %v", got, tc.want)
			}
			if d.Then != tc.then {
				t.Errorf("then %d, want %d", d.Then, tc.then)
			}
			if len(d.Send) != tc.sends {
				t.Errorf("sends %d commands, want %d", len(d.Send), tc.sends)
			}
		})
	}
}

// TestFollowUpSendsTheNextRun: the applied follow-up names the run it
// creates, and sends that run's CreateRun.
func TestFollowUpSendsTheNextRun(t *testing.T) {
	t.Parallel()
	st := stateOf(t, "completed")
	c, p := admitEnvelope(t, st, inputSpec(commands.IntentFollowUp), tenant, "")
	o := opts(allFeatures...)
	o.Partitions, o.Now = 4, 1_700_000_000_123
	d := admit(t, st, c, p, o)
	if len(d.Send) != 1 || len(d.Events) != 1 {
		t.Fatalf("decision %+v", d)
	}
	next := d.Send[0]
	applied, ok := d.Events[0].Payload.(events.CommandAppliedPayload)
	if !ok || applied.CreatedRunID != next.RunID {
		t.Fatalf("applied %+v does not name the created run %s", d.Events[0].Payload, next.RunID)
	}
	if next.Type != commands.CreateRun || next.IssuedAt != o.Now || next.TenantID != tenant {
		t.Fatalf("sent %+v", next)
	}
	if _, err := next.Validate(); err != nil {
		t.Fatalf("the follow-up's CreateRun is invalid: %v", err)
	}
}

// TestDecisionEventsFold: every decision's events fold onto the run's state
// in order, as the executor appends them.
func TestDecisionEventsFold(t *testing.T) {
	t.Parallel()
	for _, row := range matrix {
		for _, spec := range matrixColumns() {
			t.Run(row.state+"/"+spec.name, func(t *testing.T) {
				t.Parallel()
				st := stateOf(t, row.state)
				c, p := admitEnvelope(t, st, spec, tenant, "")
				d := admit(t, st, c, p, opts(allFeatures...))
				if len(d.Events) == 0 {
					t.Fatalf("decision %s/%s appends nothing", d.Outcome, d.Code)
				}
				next := *st
				for _, dr := range d.Events {
					env, err := dr.Seal(events.Identity{RunID: st.RunID, TenantID: tenant}, next.LastSeq+1, events.NewID("evt"), 1)
					if err != nil {
						t.Fatal(err)
					}
					if next, err = events.Fold(next, env); err != nil {
						t.Fatalf("decision %s/%s: %s does not fold: %v", d.Outcome, d.Code, dr.Type, err)
					}
				}
			})
		}
	}
}

func draftTypes(ds []events.Draft) []events.Type {
	out := make([]events.Type, 0, len(ds))
	for _, d := range ds {
		out = append(out, d.Type)
	}
	return out
}
