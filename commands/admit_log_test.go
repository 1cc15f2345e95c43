package commands_test

import (
	"testing"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
)

func rejectedEv(cmd, typ, key string, code events.Code) ev {
	return ev{typ: events.CommandRejected, cmd: cmd, p: events.CommandRejectedPayload{
		CommandType: typ, IdempotencyKey: key, Code: code, Message: "refused"}}
}

// TestAdmitDuplicate: a key the run has seen returns the first command with
// that key, whatever its outcome was, and changes nothing.
func TestAdmitDuplicate(t *testing.T) {
	t.Parallel()
	cmdA, cmdB := events.NewID("cmd"), events.NewID("cmd")
	cases := []struct {
		name  string
		state string
		more  []ev
		spec  cmdSpec
		key   string
		want  events.CommandRecord
	}{
		{"CreateRun retried", "queued", nil, createSpec(agent), createKey,
			events.CommandRecord{CommandID: createCmd, Type: "CreateRun", Outcome: "accepted"}},
		{"CreateRun retried after the run ended", "completed", nil, createSpec(agent), createKey,
			events.CommandRecord{CommandID: createCmd, Type: "CreateRun", Outcome: "accepted"}},
		{"CreateRun first rejected", "nonexistent", []ev{rejectedEv(cmdA, "CreateRun", "create-2", events.CodeUnknownAgent)},
			createSpec(agent), "create-2",
			events.CommandRecord{CommandID: cmdA, Type: "CreateRun", Outcome: "rejected", Code: "unknown_agent"}},
		{"command on a missing run first rejected", "nonexistent", []ev{rejectedEv(cmdA, "CancelRun", "c-9", events.CodeRunNotFound)},
			cancelSpec, "c-9", events.CommandRecord{CommandID: cmdA, Type: "CancelRun", Outcome: "rejected", Code: "run_not_found"}},
		{"cancel pending", "running/cancel pending", nil, cancelSpec, cancelKey,
			events.CommandRecord{CommandID: cancelCmd, Type: "CancelRun", Outcome: "accepted"}},
		{"same key, other command type", "running/cancel pending", nil, compactSpec, cancelKey,
			events.CommandRecord{CommandID: cancelCmd, Type: "CancelRun", Outcome: "accepted"}},
		{"cancel applied", "queued", []ev{{typ: events.RunCancelled}, {typ: events.CommandApplied, cmd: cmdA,
			p: events.CommandAppliedPayload{CommandType: "CancelRun", IdempotencyKey: "c-2"}}}, cancelSpec, "c-2",
			events.CommandRecord{CommandID: cmdA, Type: "CancelRun", Outcome: "applied"}},
		{"steer first rejected", "running", []ev{rejectedEv(cmdA, "AppendUserInput", "s-1", events.CodeNotImplemented)},
			inputSpec(commands.IntentSteer), "s-1",
			events.CommandRecord{CommandID: cmdA, Type: "AppendUserInput", Outcome: "rejected", Code: "not_implemented"}},
		{"cancel first had no effect", "completed", []ev{{typ: events.CommandNoEffect, cmd: cmdA,
			p: events.CommandNoEffectPayload{CommandType: "CancelRun", IdempotencyKey: "c-3"}}}, cancelSpec, "c-3",
			events.CommandRecord{CommandID: cmdA, Type: "CancelRun", Outcome: "no_effect"}},
		{"a later command with the key does not take it over", "running", []ev{
			rejectedEv(cmdA, "AppendUserInput", "s-2", events.CodeInvalidState),
			rejectedEv(cmdB, "AppendUserInput", "s-2", events.CodeNotImplemented)},
			inputSpec(commands.IntentSteer), "s-2",
			events.CommandRecord{CommandID: cmdA, Type: "AppendUserInput", Outcome: "rejected", Code: "invalid_state"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			st := fold(t, *stateOf(t, tc.state), tc.more...)
			c, p := admitEnvelope(t, st, tc.spec, tenant, tc.key)
			d := admit(t, st, c, p, opts(allFeatures...))
			checkDecision(t, d, duplicated)
			if *d.Original != tc.want {
				t.Fatalf("Original = %+v, want %+v", *d.Original, tc.want)
			}
			d.Original.Outcome = "tampered"
			if st.Commands[tc.key] != tc.want {
				t.Fatal("Decision.Original aliases the run state")
			}
		})
	}
}

// TestAdmitApprovalForDecidedItem: once a decision on an item is in the log,
// that item no longer awaits approval; the other pending items still do.
func TestAdmitApprovalForDecidedItem(t *testing.T) {
	t.Parallel()
	first, second := events.NewID("itm"), events.NewID("itm")
	st := fold(t, events.RunState{RunID: events.NewID("run")}, evAccepted, evStarted,
		evItemStarted(first, events.ItemToolCall), evItemAwaiting(first),
		evItemStarted(second, events.ItemToolCall), evItemAwaiting(second),
		evPaused(events.PauseAwaitingApproval, first, second),
		ev{typ: events.ApprovalDecisionSubmitted, item: first, cmd: events.NewID("cmd"),
			p: events.ApprovalDecisionPayload{Decision: "allow", Scope: "item", Actor: actor}})
	cases := []struct {
		name string
		item string
		want want
	}{
		{"the other item is still pending", second, applied},
		{"the decided item is not", first, notPending},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, p := admitEnvelope(t, st, approveSpec(tc.item), tenant, "")
			checkDecision(t, admit(t, st, c, p, opts(allFeatures...)), tc.want)
		})
	}
}

// outcomeEvent is the event that records decision d of command c in the
// run's log (the mapping of services/executor's outcomeDrafts).
func outcomeEvent(c commands.Envelope, p any, d commands.Decision) ev {
	typ, key := string(c.Type), c.IdempotencyKey
	switch d.Outcome {
	case events.OutcomeRejected:
		return rejectedEv(c.CommandID, typ, key, d.Code)
	case events.OutcomeDuplicate:
		return ev{typ: events.CommandDuplicate, cmd: c.CommandID, p: events.CommandDuplicatePayload{CommandType: typ,
			IdempotencyKey: key, OriginalCommandID: d.Original.CommandID, OriginalOutcome: d.Original.Outcome}}
	case events.OutcomeNoEffect:
		return ev{typ: events.CommandNoEffect, cmd: c.CommandID, p: events.CommandNoEffectPayload{CommandType: typ, IdempotencyKey: key}}
	case events.OutcomeApplied:
		return ev{typ: events.CommandApplied, cmd: c.CommandID, p: events.CommandAppliedPayload{CommandType: typ, IdempotencyKey: key}}
	}
	if cp, ok := p.(*commands.CreateRunPayload); ok {
		return ev{typ: events.RunAccepted, cmd: c.CommandID, p: events.RunAcceptedPayload{AgentID: cp.AgentID, Input: cp.Input,
			SandboxKey: cp.SandboxKey, IdempotencyKey: key, Actor: c.Actor}}
	}
	return ev{typ: events.CommandAccepted, cmd: c.CommandID, p: events.CommandAcceptedPayload{CommandType: typ,
		IdempotencyKey: key, Command: c.Payload}}
}

// TestAdmitDecisionsFoldIntoTheLog: every decision admission takes can be
// recorded in the run's log; a retry of the same command is then a duplicate.
func TestAdmitDecisionsFoldIntoTheLog(t *testing.T) {
	t.Parallel()
	for _, row := range matrix {
		for _, spec := range matrixColumns() {
			t.Run(row.state+"/"+spec.name, func(t *testing.T) {
				t.Parallel()
				st := stateOf(t, row.state)
				c, p := admitEnvelope(t, st, spec, tenant, "")
				d := admit(t, st, c, p, opts(allFeatures...))
				e := outcomeEvent(c, p, d)
				env, err := events.Draft{Type: e.typ, CommandID: e.cmd, Payload: e.p}.
					Seal(events.Identity{RunID: st.RunID, TenantID: tenant}, st.LastSeq+1, events.NewID("evt"), 1)
				if err != nil {
					t.Fatal(err)
				}
				next, err := events.Fold(*st, env)
				if err != nil {
					t.Fatalf("decision %s/%s cannot be recorded: %v", d.Outcome, d.Code, err)
				}
				retry := commands.Admit(&next, c, p, opts(allFeatures...))
				if retry.Outcome != events.OutcomeDuplicate || retry.Original.CommandID != c.CommandID {
					t.Fatalf("retry after %s: %+v, want a duplicate of %s", d.Outcome, retry, c.CommandID)
				}
			})
		}
	}
}
