package commands_test

import (
	"testing"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/events/eventstest"
)

var (
	grantRun  = events.Identity{RunID: "run_01J0000000000000000000000G", TenantID: tenant, PlatformSessionID: "sess-g"}
	grantUser = events.Actor{Type: "user", ID: "u"}
	callShell = events.ToolCallRef{ID: "call_1", Name: "shell", Arguments: `{"command":"ls"}`}
)

const (
	grantResp = "itm_01J0000000000000000000001G"
	grantItem = "itm_01J0000000000000000000002G"
)

// awaitingShell is a run paused on one shell call awaiting approval under
// rule shell-any.
func awaitingShell(t *testing.T) *eventstest.Log {
	t.Helper()
	l := eventstest.New(t, grantRun).Accepted("cmd_create", events.RunAcceptedPayload{AgentID: agent,
		SandboxKey: events.SandboxKey{TenantID: tenant, WorkspaceID: "w", AgentID: agent, OwnerID: "u"}}).Started("exec-1")
	l.Response(grantResp, events.AssistantData{ToolCalls: []events.ToolCallRef{callShell}}, "A call.")
	l.ToolStarted(grantItem, grantResp, events.ItemCommandExecution, callShell).Ask(grantItem, callShell, "shell-any", "ask")
	return l.Paused(events.PauseAwaitingApproval, grantItem)
}

// admitOn admits payload p of type typ on the log's state at its clock and
// appends the decision's events.
func admitOn(t *testing.T, l *eventstest.Log, typ commands.Type, p any) commands.Decision {
	t.Helper()
	c := newEnvelope(t, typ, commands.Header{RunID: grantRun.RunID, TenantID: tenant, Actor: grantUser}, p)
	payload, err := c.Validate()
	if err != nil {
		t.Fatal(err)
	}
	st := l.State()
	d := commands.Admit(&st, c, payload, commands.AdmitOptions{Now: l.Now(), Implemented: func(string) bool { return true }})
	l.Add(d.Events...)
	return d
}

// TestASessionGrantWithATTLExpiresByTheLogsTime: the grant's expiry is the
// deciding admission's time plus the TTL; before it the grant covers the
// call, from it on the call asks again, saying grant_expired, and a
// follow-up does not inherit it.
func TestASessionGrantWithATTLExpiresByTheLogsTime(t *testing.T) {
	t.Parallel()
	l := awaitingShell(t)
	decidedAt := l.Now()
	admitOn(t, l, commands.SubmitApprovalDecision, &commands.SubmitApprovalDecisionPayload{ItemID: grantItem,
		Decision: events.DecisionAllow, Scope: events.ScopePlatformSession, TTLSeconds: 60})
	st := l.State()
	if len(st.Grants) != 1 || st.Grants[0].ExpiresAt != decidedAt+60_000 {
		t.Fatalf("grants = %+v, want one expiring at %d", st.Grants, decidedAt+60_000)
	}
	if _, ok := st.Granted("shell", "shell-any", decidedAt+59_999); !ok {
		t.Error("the grant does not cover a call before its expiry")
	}
	if _, ok := st.Granted("shell", "shell-any", decidedAt+60_000); ok {
		t.Error("the grant covers a call at its expiry")
	}
	if g, why, ok := st.Lapsed("shell", "shell-any", decidedAt+60_000); !ok || why != events.GrantExpired || g.GrantID != st.Grants[0].GrantID {
		t.Errorf("Lapsed = %+v %q %v, want the grant, grant_expired", g, why, ok)
	}
	if got := st.SessionGrants(decidedAt + 60_000); len(got) != 0 {
		t.Errorf("a later run inherits the expired grant: %+v", got)
	}
}

// TestRevokeRemovesTheGrantInEveryState: a revoke applies at once on a
// running, paused or finished run that holds the grant, the call asks again
// saying grant_revoked, no follow-up inherits it, and a second revoke has no
// effect.
func TestRevokeRemovesTheGrantInEveryState(t *testing.T) {
	t.Parallel()
	for _, end := range []string{"paused", "running", "completed"} {
		t.Run(end, func(t *testing.T) {
			t.Parallel()
			l := awaitingShell(t)
			admitOn(t, l, commands.SubmitApprovalDecision, &commands.SubmitApprovalDecisionPayload{ItemID: grantItem,
				Decision: events.DecisionAllow, Scope: events.ScopePlatformSession})
			grant := l.State().Grants[0]
			switch end {
			case "paused":
				l.Add(events.Draft{Type: events.RunPaused, Payload: events.RunPausedPayload{PauseReason: events.PauseAwaitingApproval}})
			case "completed":
				l.ToolCompleted(grantItem, events.ItemCommandExecution, callShell, events.ToolResultData{}).Completed("done")
			}
			d := admitOn(t, l, commands.RevokePermissionGrant, &commands.RevokePermissionGrantPayload{GrantID: grant.GrantID, Reason: "enough"})
			if d.Outcome != events.OutcomeApplied || d.Events[0].Type != events.PermissionGrantRevoked {
				t.Fatalf("revoke: %s %+v", d.Outcome, d.Events)
			}
			st := l.State()
			if _, ok := st.Granted("shell", "shell-any", l.Now()); ok {
				t.Error("the revoked grant still covers the call")
			}
			if _, why, ok := st.Lapsed("shell", "shell-any", l.Now()); !ok || why != events.GrantRevoked {
				t.Errorf("Lapsed = %q %v, want grant_revoked", why, ok)
			}
			if got := st.SessionGrants(l.Now()); len(got) != 0 {
				t.Errorf("a follow-up inherits the revoked grant: %+v", got)
			}
			again := admitOn(t, l, commands.RevokePermissionGrant, &commands.RevokePermissionGrantPayload{GrantID: grant.GrantID})
			if again.Outcome != events.OutcomeNoEffect {
				t.Errorf("a second revoke: %s, want no_effect", again.Outcome)
			}
		})
	}
}

// TestGrantTTLBounds: a TTL needs an allow of scope platform_session and
// is bounded.
func TestGrantTTLBounds(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		p     commands.SubmitApprovalDecisionPayload
		valid bool
	}{
		{"session allow", commands.SubmitApprovalDecisionPayload{Decision: "allow", Scope: "platform_session", TTLSeconds: 1}, true},
		{"the longest", commands.SubmitApprovalDecisionPayload{Decision: "allow", Scope: "platform_session", TTLSeconds: commands.MaxGrantTTLSeconds}, true},
		{"too long", commands.SubmitApprovalDecisionPayload{Decision: "allow", Scope: "platform_session", TTLSeconds: commands.MaxGrantTTLSeconds + 1}, false},
		{"negative", commands.SubmitApprovalDecisionPayload{Decision: "allow", Scope: "platform_session", TTLSeconds: -1}, false},
		{"run scope", commands.SubmitApprovalDecisionPayload{Decision: "allow", Scope: "run", TTLSeconds: 60}, false},
		{"deny", commands.SubmitApprovalDecisionPayload{Decision: "deny", Scope: "platform_session", TTLSeconds: 60}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.p.ItemID = grantItem
			c := newEnvelope(t, commands.SubmitApprovalDecision, commands.Header{RunID: grantRun.RunID, TenantID: tenant, Actor: grantUser}, tc.p)
			if _, err := c.Validate(); (err == nil) != tc.valid {
				t.Errorf("Validate = %v, want valid %v", err, tc.valid)
			}
		})
	}
}

// TestRevokeGoesOnToTheRunsItsRunCreated: a follow-up created from a
// finished run before the revoke inherited the grant, and the API may not
// list it yet; the revoke applied on the parent is sent on to it, on the
// same partition, under the same idempotency key. A revoke with no effect
// sends nothing.
func TestRevokeGoesOnToTheRunsItsRunCreated(t *testing.T) {
	t.Parallel()
	l := awaitingShell(t)
	admitOn(t, l, commands.SubmitApprovalDecision, &commands.SubmitApprovalDecisionPayload{ItemID: grantItem,
		Decision: events.DecisionAllow, Scope: events.ScopePlatformSession})
	l.ToolCompleted(grantItem, events.ItemCommandExecution, callShell, events.ToolResultData{}).Completed("done")
	grant := l.State().Grants[0]
	fu := admitOn(t, l, commands.AppendUserInput, &commands.AppendUserInputPayload{Intent: commands.IntentFollowUp, Content: "again"})
	if fu.Outcome != events.OutcomeApplied || len(fu.Send) != 1 || fu.Send[0].Type != commands.CreateRun {
		t.Fatalf("follow-up: %s, sends %+v", fu.Outcome, fu.Send)
	}
	child := fu.Send[0].RunID
	if l.State().NextRunID != child {
		t.Fatalf("next run %q, want %q", l.State().NextRunID, child)
	}

	c := newEnvelope(t, commands.RevokePermissionGrant, commands.Header{RunID: grantRun.RunID, TenantID: tenant,
		Actor: grantUser, IdempotencyKey: "revoke-1", PlatformSessionID: grantRun.PlatformSessionID},
		&commands.RevokePermissionGrantPayload{GrantID: grant.GrantID, Reason: "enough"})
	payload, err := c.Validate()
	if err != nil {
		t.Fatal(err)
	}
	st := l.State()
	d := commands.Admit(&st, c, payload, commands.AdmitOptions{Now: l.Now(), Implemented: func(string) bool { return true }})
	if d.Outcome != events.OutcomeApplied || len(d.Send) != 1 {
		t.Fatalf("revoke: %s, sends %+v, want applied and one revoke sent on", d.Outcome, d.Send)
	}
	fwd := d.Send[0]
	if fwd.RunID != child || fwd.Type != commands.RevokePermissionGrant || fwd.IdempotencyKey != c.IdempotencyKey ||
		fwd.CommandID == c.CommandID || fwd.Actor != c.Actor || fwd.TenantID != tenant ||
		fwd.PlatformSessionID != c.PlatformSessionID || string(fwd.Payload) != string(c.Payload) {
		t.Errorf("sent on: %+v, want the revoke on run %s under its key with a command id of its own", fwd, child)
	}
	if _, err := fwd.Validate(); err != nil {
		t.Errorf("the revoke sent on does not validate: %v", err)
	}
	if commands.Fingerprint(fwd) != commands.Fingerprint(c) {
		t.Error("the revoke sent on is another request: the API's own revoke of the child would be refused idempotency_key_reused")
	}
	l.Add(d.Events...)
	st = l.State()
	again := commands.Admit(&st, newEnvelope(t, commands.RevokePermissionGrant, commands.Header{RunID: grantRun.RunID,
		TenantID: tenant, Actor: grantUser}, &commands.RevokePermissionGrantPayload{GrantID: grant.GrantID}), payload,
		commands.AdmitOptions{Now: l.Now()})
	if again.Outcome != events.OutcomeNoEffect || len(again.Send) != 0 {
		t.Errorf("a revoke of a grant the run no longer holds: %s, sends %+v; want no_effect, nothing sent", again.Outcome, again.Send)
	}
}

// TestARevokeThatOvertakesItsCreate: a revoke that reaches a run before the
// run's create is refused run_not_found naming its grant, and the create,
// landing after it, hands on the session's other grants but not that one.
// The same revoke on a run that exists names no grant.
func TestARevokeThatOvertakesItsCreate(t *testing.T) {
	t.Parallel()
	revoked := events.PermissionGrant{GrantID: "grt_01J00000000000000000000001", ToolName: "shell", RuleID: "shell-any",
		Scope: events.ScopePlatformSession, Actor: grantUser}
	kept := revoked
	kept.GrantID, kept.ToolName = "grt_01J00000000000000000000002", "read_file"
	l := eventstest.New(t, grantRun)
	d := admitOn(t, l, commands.RevokePermissionGrant, &commands.RevokePermissionGrantPayload{GrantID: revoked.GrantID})
	if d.Outcome != events.OutcomeRejected || d.Code != events.CodeRunNotFound {
		t.Fatalf("revoke before the create: %s %s, want rejected run_not_found", d.Outcome, d.Code)
	}
	if p := d.Events[0].Payload.(events.CommandRejectedPayload); p.GrantID != revoked.GrantID {
		t.Fatalf("the refusal names grant %q, want %s", p.GrantID, revoked.GrantID)
	}
	if got := l.State().PreRevokedGrants; len(got) != 1 || got[0] != revoked.GrantID {
		t.Fatalf("PreRevokedGrants = %v, want [%s]", got, revoked.GrantID)
	}

	create := createSpec(agent).payload.(*commands.CreateRunPayload)
	create.SessionGrants = []events.PermissionGrant{revoked, kept}
	create.SandboxKey.TenantID = tenant
	c := newEnvelope(t, commands.CreateRun, commands.Header{RunID: grantRun.RunID, TenantID: tenant, Actor: grantUser,
		IdempotencyKey: "create-late"}, create)
	payload, err := c.Validate()
	if err != nil {
		t.Fatal(err)
	}
	st := l.State()
	d = commands.Admit(&st, c, payload, opts())
	if d.Outcome != events.OutcomeAccepted {
		t.Fatalf("the late create: %s %s %s", d.Outcome, d.Code, d.Message)
	}
	l.Add(d.Events...)
	st = l.State()
	if len(st.InheritedGrants) != 1 || st.InheritedGrants[0].GrantID != kept.GrantID {
		t.Fatalf("the run inherits %+v, want only %s", st.InheritedGrants, kept.GrantID)
	}

	again := admitOn(t, l, commands.RevokePermissionGrant, &commands.RevokePermissionGrantPayload{GrantID: kept.GrantID})
	if again.Outcome != events.OutcomeNoEffect {
		t.Fatalf("a revoke on the created run: %s, want no_effect (the run holds the grant only once started)", again.Outcome)
	}
	if got := l.State().PreRevokedGrants; len(got) != 1 {
		t.Errorf("a revoke after the create changed PreRevokedGrants: %v", got)
	}
}
