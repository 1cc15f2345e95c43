package systemtest_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/projections/runner"
	"github.com/xbot-runtime/xbot/services/api/client"
	"github.com/xbot-runtime/xbot/services/engine/policy"
	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/stack"
)

// The end-to-end tests of session grants one can see and revoke (issue 16):
// the list, a revoke that reaches the run in flight and later runs through
// the log, a TTL, and their tenant isolation.

// twoDeploys is an agent that deploys, asks the user whether to go on, and
// deploys again: the second deploy is the call a grant given for the first
// covers, asked after the test changed the grant.
func twoDeploys(count string) profile.Profile {
	return deploysAround(count, profile.Turn{ToolCalls: call1("ask_user", `{"question":"Deploy again?"}`)})
}

// deploysAround is an agent that deploys, plays middle, and deploys again.
func deploysAround(count string, middle profile.Turn) profile.Profile {
	deploy := func(n int) profile.Turn {
		return profile.Turn{Text: "Deploying.", ToolCalls: call1("shell", fmt.Sprintf(`{"command":"echo deploy-%d >> %s"}`, n, count))}
	}
	return profile.Profile{ID: "ops", Model: profile.ModelScripted, Tools: []string{"shell", "ask_user"},
		Policy: policy.Config{Rules: []policy.Rule{deployRule}}, Script: []profile.Turn{deploy(1), middle, deploy(2), {Text: "Done."}}}
}

// grantedThenAsking runs twoDeploys in session until it asks the user, the
// first deploy allowed for the session with ttl (0: none); it returns the
// run and the grant.
func grantedThenAsking(t *testing.T, st *stack.Stack, session string, ttl int64) (string, client.SessionGrant) {
	t.Helper()
	c := apiOf(t, st)
	runID := createRun(t, c, client.CreateRunRequest{AgentID: "ops", Input: client.UserInput{Content: "ship"},
		PlatformSessionID: session}, session+"-create").RunID
	waitStatus(t, st, runID, "paused", 10*time.Second)
	items := pendingApprovals(t, st, runID, 1)
	if _, err := c.DecideApproval(t.Context(), runID, client.ApprovalDecisionRequest{ItemID: items[0], Decision: "allow",
		Scope: "platform_session", TTLSeconds: ttl}, client.CommandOptions{IdempotencyKey: session + "-allow"}); err != nil {
		t.Fatalf("decision: %v", err)
	}
	waitPause(t, st, runID, events.PauseAwaitingUserInput)
	if ttl > 0 {
		// A grant with a TTL may lapse before the read model lists it (the
		// list leaves expired grants out): take it from the log, and compare
		// it with the list only if the list still has it.
		logged := payloads[events.PermissionGrantPayload](t, st, runID)
		if len(logged) != 1 || logged[0].ExpiresAt == 0 || logged[0].ToolName != "shell" || logged[0].RuleID != "deploy" {
			t.Fatalf("the log's grants %+v, want one shell/deploy grant with an expiry", logged)
		}
		g := client.SessionGrant{GrantID: logged[0].GrantID, ToolName: logged[0].ToolName, RuleID: logged[0].RuleID,
			Scope: logged[0].Scope, RunID: runID, ExpiresAt: logged[0].ExpiresAt}
		if listed, err := c.SessionGrants(t.Context(), session); err == nil && len(listed) == 1 && listed[0].ExpiresAt != g.ExpiresAt {
			t.Fatalf("the list's grant %+v, the log's expires at %d", listed[0], g.ExpiresAt)
		}
		return runID, g
	}
	var grants []client.SessionGrant
	eventually.Succeeds(t, 10*time.Second, "the session lists its grant", func() error {
		var err error
		if grants, err = c.SessionGrants(t.Context(), session); err == nil && len(grants) != 1 {
			err = fmt.Errorf("grants %+v", grants)
		}
		return err
	})
	g := grants[0]
	if g.ToolName != "shell" || g.RuleID != "deploy" || g.RunID != runID || g.Scope != "platform_session" ||
		g.GrantedBy.ID == "" || g.GrantedAt == 0 || (ttl > 0) != (g.ExpiresAt > 0) {
		t.Fatalf("grant %+v", g)
	}
	return runID, g
}

// waitPause waits until runID is paused for reason.
func waitPause(t *testing.T, st *stack.Stack, runID string, reason events.PauseReason) {
	t.Helper()
	eventually.Succeeds(t, 10*time.Second, "run paused "+string(reason), func() error {
		if r := getRun(t, st, runID); r.Status != "paused" || r.PauseReason != string(reason) {
			return fmt.Errorf("run is %s (%s)", r.Status, r.PauseReason)
		}
		return nil
	})
}

// askedAgain answers the run's question and returns the awaiting_approval of
// the second deploy, which must ask again.
func askedAgain(t *testing.T, st *stack.Stack, runID, key string) events.ItemAwaitingApprovalPayload {
	t.Helper()
	input(t, st, runID, "clarification", "yes", key)
	waitPause(t, st, runID, events.PauseAwaitingApproval)
	asks := payloads[events.ItemAwaitingApprovalPayload](t, st, runID)
	if len(asks) != 2 {
		t.Fatalf("%d asks, want two: the second deploy asks again", len(asks))
	}
	return asks[1]
}

func TestRevokedSessionGrantAsksAgainWithTheReasonInTheLog(t *testing.T) {
	t.Parallel()
	count := filepath.Join(t.TempDir(), "count")
	e, st, _ := agentEnv(t, twoDeploys(count))
	runID, g := grantedThenAsking(t, st, "sess-revoke", 0)
	c := apiOf(t, st)
	// Neither another tenant nor another actor of the tenant may revoke it.
	if _, err := c.WithToken(otherToken).RevokeGrant(t.Context(), "sess-revoke", g.GrantID, "", client.CommandOptions{}); !isProblem(err, 404, "not_found") {
		t.Errorf("another tenant's revoke: %v, want 404", err)
	}
	if _, err := c.WithToken(otherToken).SessionGrants(t.Context(), "sess-revoke"); !isProblem(err, 404, "not_found") {
		t.Errorf("another tenant's list: %v, want 404", err)
	}
	if _, err := c.WithToken(bobToken).RevokeGrant(t.Context(), "sess-revoke", g.GrantID, "", client.CommandOptions{}); !isProblem(err, 403, "forbidden_scope") {
		t.Errorf("another owner's revoke: %v, want 403 forbidden_scope", err)
	}
	res, err := c.RevokeGrant(t.Context(), "sess-revoke", g.GrantID, "no more deploys", client.CommandOptions{IdempotencyKey: "revoke-1"})
	if err != nil || len(res.Commands) != 1 || res.Commands[0].RunID != runID || res.Commands[0].Outcome != client.OutcomeApplied {
		t.Fatalf("revoke: %+v %v, want one command applied on run %s", res, err, runID)
	}
	// The answer came once the read model had the revocation: the grant is
	// no longer listed, nor handed to a new run of the session.
	if grants, err := c.SessionGrants(t.Context(), "sess-revoke"); err != nil || len(grants) != 0 {
		t.Errorf("after the revoke the session lists %+v %v", grants, err)
	}
	revoked := payloads[events.PermissionGrantRevokedPayload](t, st, runID)
	if len(revoked) != 1 || revoked[0].GrantID != g.GrantID || revoked[0].Reason != "no more deploys" || revoked[0].Actor.ID == "" {
		t.Fatalf("revocations in the log %+v", revoked)
	}
	ask := askedAgain(t, st, runID, "revoke-answer")
	if ask.AskReason != events.GrantRevoked || ask.GrantID != g.GrantID {
		t.Errorf("the second deploy asks with %q %q, want grant_revoked %s", ask.AskReason, ask.GrantID, g.GrantID)
	}
	pending, err := c.AllApprovals(t.Context(), client.ApprovalQuery{Status: client.ApprovalPending, RunID: runID})
	if err != nil || len(pending) != 1 || pending[0].AskReason != events.GrantRevoked || pending[0].LapsedGrantID != g.GrantID {
		t.Fatalf("pending approvals %+v %v, want one saying grant_revoked %s", pending, err, g.GrantID)
	}
	decide(t, st, runID, pending[0].ItemID, "allow", "item", "revoke-allow-2")
	waitStatus(t, st, runID, "completed", 10*time.Second)
	if got := lines(t, count); !slices.Equal(got, []string{"deploy-1", "deploy-2"}) {
		t.Errorf("tools ran %v", got)
	}
	// Neither a follow-up (from the run's state) nor a new run of the session
	// (from the read model) inherits it.
	next := input(t, st, runID, "follow_up", "ship again", "revoke-next").CreatedRunID
	third := createRun(t, c, client.CreateRunRequest{AgentID: "ops", Input: client.UserInput{Content: "ship"},
		PlatformSessionID: "sess-revoke"}, "revoke-third").RunID
	for _, id := range []string{next, third} {
		if acc := accepted(t, st, id); len(acc.SessionGrants) != 0 {
			t.Errorf("run %s inherits %+v, want no grant", id, acc.SessionGrants)
		}
	}
	// Both ask for the deploy again and wait (one after the other: they
	// share the sandbox key); the log is still before comparing it.
	for _, id := range []string{next, third} {
		waitStatus(t, st, id, "paused", 20*time.Second)
	}
	e.invariants(st)
}

// TestRevokeReachesARunningRun: the revoke is recorded while the run is in
// a tool call; its next call the grant covered asks again.
func TestRevokeReachesARunningRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	count, gate := filepath.Join(dir, "count"), filepath.Join(dir, "gate")
	// The middle call runs until the test opens the gate, after the revoke.
	wait := profile.Turn{ToolCalls: call1("shell", fmt.Sprintf(`{"command":"while [ ! -f %s ]; do sleep 0.05; done"}`, gate))}
	e, st, _ := agentEnv(t, deploysAround(count, wait))
	c := apiOf(t, st)
	runID := createRun(t, c, client.CreateRunRequest{AgentID: "ops", Input: client.UserInput{Content: "ship"},
		PlatformSessionID: "sess-running"}, "running-create").RunID
	waitStatus(t, st, runID, "paused", 10*time.Second)
	decide(t, st, runID, pendingApprovals(t, st, runID, 1)[0], "allow", "platform_session", "running-allow")
	eventually.Succeeds(t, 10*time.Second, "the gated call runs", func() error {
		if n := countType(t, st, runID, events.ItemStarted); n < 4 { // response, deploy, response, gated call
			return fmt.Errorf("%d items started", n)
		}
		return nil
	})
	g := payloads[events.PermissionGrantPayload](t, st, runID)[0]
	res, err := c.RevokeGrant(t.Context(), "sess-running", g.GrantID, "", client.CommandOptions{})
	if err != nil || len(res.Commands) != 1 || res.Commands[0].Outcome != client.OutcomeApplied {
		t.Fatalf("revoke %+v %v", res, err)
	}
	if r := getRun(t, st, runID); r.Status != "running" {
		t.Fatalf("the run is %s at the revoke, want running", r.Status)
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	waitPause(t, st, runID, events.PauseAwaitingApproval)
	asks := payloads[events.ItemAwaitingApprovalPayload](t, st, runID)
	if len(asks) != 2 || asks[1].AskReason != events.GrantRevoked || asks[1].GrantID != g.GrantID {
		t.Errorf("asks %+v, want the second deploy to ask again, grant_revoked", asks)
	}
	cancelRun(t, st, runID, "done", "running-cancel")
	e.invariants(st)
}

func TestExpiredSessionGrantAsksAgainWithTheReasonInTheLog(t *testing.T) {
	t.Parallel()
	count := filepath.Join(t.TempDir(), "count")
	e, st, _ := agentEnv(t, twoDeploys(count))
	runID, g := grantedThenAsking(t, st, "sess-ttl", 1)
	applied := payloads[events.PermissionGrantPayload](t, st, runID)
	if len(applied) != 1 || applied[0].ExpiresAt != g.ExpiresAt {
		t.Fatalf("the log's grant %+v, the API's expires at %d", applied, g.ExpiresAt)
	}
	// The list drops the grant once its expiry has passed.
	eventually.Succeeds(t, 10*time.Second, "the grant lapses", func() error {
		grants, err := apiOf(t, st).SessionGrants(t.Context(), "sess-ttl")
		if err == nil && len(grants) != 0 {
			err = fmt.Errorf("grants %+v", grants)
		}
		return err
	})
	ask := askedAgain(t, st, runID, "ttl-answer")
	if ask.AskReason != events.GrantExpired || ask.GrantID != g.GrantID {
		t.Errorf("the second deploy asks with %q %q, want grant_expired %s", ask.AskReason, ask.GrantID, g.GrantID)
	}
	if items := pendingApprovals(t, st, runID, 1); len(items) == 1 {
		decide(t, st, runID, items[0], "deny", "item", "ttl-deny")
	}
	waitStatus(t, st, runID, "completed", 10*time.Second)
	if got := lines(t, count); !slices.Equal(got, []string{"deploy-1"}) {
		t.Errorf("tools ran %v", got)
	}
	next := input(t, st, runID, "follow_up", "ship again", "ttl-next").CreatedRunID
	if acc := accepted(t, st, next); len(acc.SessionGrants) != 0 {
		t.Errorf("the follow-up inherits %+v, want no grant", acc.SessionGrants)
	}
	waitStatus(t, st, next, "paused", 20*time.Second) // it asks again and waits: the log is still
	e.invariants(st)
}

// TestARevokeGoesOnToTheFollowUpsOfItsRun: a follow-up the executor created
// from a finished run inherited the run's grant. A revoke that reaches only
// the parent (as when the API lists the session's runs before the read
// model shows the follow-up) is sent on to it.
func TestARevokeGoesOnToTheFollowUpsOfItsRun(t *testing.T) {
	t.Parallel()
	count := filepath.Join(t.TempDir(), "count")
	e, st, _ := agentEnv(t, twoDeploys(count))
	runID, g := grantedThenAsking(t, st, "sess-forward", 0)
	input(t, st, runID, "clarification", "yes", "forward-answer")
	waitStatus(t, st, runID, "completed", 10*time.Second)
	next := input(t, st, runID, "follow_up", "ship again", "forward-next").CreatedRunID
	if acc := accepted(t, st, next); len(acc.SessionGrants) != 1 || acc.SessionGrants[0].GrantID != g.GrantID {
		t.Fatalf("the follow-up inherits %+v, want %s", acc.SessionGrants, g.GrantID)
	}
	c, err := commands.New(commands.RevokePermissionGrant, commands.Header{RunID: runID, PlatformSessionID: "sess-forward",
		TenantID: tenant, Actor: events.Actor{Type: "user", ID: tenant}, IdempotencyKey: "forward-revoke"},
		commands.RevokePermissionGrantPayload{GrantID: g.GrantID, Reason: "stop"})
	if err != nil {
		t.Fatal(err)
	}
	e.produceSigned(st, c, 1)
	for _, id := range []string{runID, next} {
		eventually.Succeeds(t, 10*time.Second, "run "+id+" records the revocation", func() error {
			if got := payloads[events.PermissionGrantRevokedPayload](t, st, id); len(got) != 1 ||
				got[0].GrantID != g.GrantID || got[0].Reason != "stop" {
				return fmt.Errorf("revocations %+v", got)
			}
			return nil
		})
	}
	// The follow-up deploys under the grant or asks for it, as the revoke
	// came before or after its call; either way it then waits.
	waitStatus(t, st, next, "paused", 20*time.Second)
	e.invariants(st)
}

// accepted waits for the run's runtime.run.accepted in the read model.
func accepted(t *testing.T, st *stack.Stack, runID string) events.RunAcceptedPayload {
	t.Helper()
	var acc events.RunAcceptedPayload
	eventually.Succeeds(t, 10*time.Second, "run "+runID+" accepted", func() error {
		evs, err := apiOf(t, st).AllEvents(t.Context(), runID)
		if err != nil {
			return err
		}
		for _, ev := range evs {
			if ev.Type == events.RunAccepted {
				acc, err = client.DecodePayload[events.RunAcceptedPayload](ev)
				return err
			}
		}
		return fmt.Errorf("no runtime.run.accepted among %d events", len(evs))
	})
	return acc
}

// TestRevokedGrantsRebuildTheSame: a grant revoked in the run that gave it
// and in a run that inherited it gives the same Postgres read models live
// and rebuilt from the log, whichever run's revocation a view reads first.
func TestRevokedGrantsRebuildTheSame(t *testing.T) {
	t.Parallel()
	count := filepath.Join(t.TempDir(), "count")
	e, st, _ := agentEnv(t, deployer("ops", count, "deploy"))
	c := apiOf(t, st)
	ship := func(key string) string {
		return createRun(t, c, client.CreateRunRequest{AgentID: "ops", Input: client.UserInput{Content: "ship"},
			PlatformSessionID: "sess-rebuild"}, key).RunID
	}
	first := ship("rb-grant-1")
	waitStatus(t, st, first, "paused", 10*time.Second)
	decide(t, st, first, pendingApprovals(t, st, first, 1)[0], "allow", "platform_session", "rb-grant-allow")
	waitStatus(t, st, first, "completed", 10*time.Second)
	second := ship("rb-grant-2") // inherits the grant, which covers its deploy
	waitStatus(t, st, second, "completed", 10*time.Second)
	grants := payloads[events.PermissionGrantPayload](t, st, first)
	res, err := c.RevokeGrant(t.Context(), "sess-rebuild", grants[0].GrantID, "rebuild", client.CommandOptions{})
	if err != nil || len(res.Commands) != 2 {
		t.Fatalf("revoke %+v %v", res, err)
	}
	for _, r := range res.Commands {
		if r.Outcome != client.OutcomeApplied {
			t.Errorf("revoke on run %s: %s, want applied (both runs hold the grant)", r.RunID, r.Outcome)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	eventually.Succeeds(t, 20*time.Second, "postgres caught up", func() error {
		lag, err := st.Projectors["postgres"].Lag(ctx)
		if err != nil || lag.Total() != 0 {
			return fmt.Errorf("lag %v (%w)", lag.Partitions, err)
		}
		return nil
	})
	live, err := st.Store.Checksums(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st.Stop(ctx)
	store := postgresView(ctx, t, e.dsn, e.kcfg)
	eventually.Succeeds(t, 30*time.Second, "rebuild", func() error {
		return runner.Rebuild(ctx, runner.Config{Kafka: e.kcfg, Projector: store, Logger: zaptest.NewLogger(t)}, true, nil)
	})
	rebuilt, err := store.Checksums(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(live, rebuilt) {
		t.Errorf("postgres read models differ after the rebuild:\nlive    %v\nrebuilt %v", live, rebuilt)
	}
}

// TestARevokeThatOvertakesItsCreate: a create whose send outlived its
// session hold (an API process that hung, or died with the record on its
// way) can reach the run's partition after a revoke listed its claimed run.
// The executor refuses that revoke run_not_found naming the grant, and the
// create, landing after it, does not hand the grant on; the run then asks
// for the call the grant covered.
func TestARevokeThatOvertakesItsCreate(t *testing.T) {
	t.Parallel()
	count := filepath.Join(t.TempDir(), "count")
	e, st, _ := agentEnv(t, twoDeploys(count))
	const session = "sess-overtaken"
	granting, g := grantedThenAsking(t, st, session, 0)
	held := payloads[events.PermissionGrantPayload](t, st, granting)
	if len(held) != 1 || held[0].GrantID != g.GrantID {
		t.Fatalf("the granting run's grants %+v, want %s", held, g.GrantID)
	}
	sk := events.SandboxKey{TenantID: tenant, WorkspaceID: "default", AgentID: "ops", OwnerID: "late"}
	runID := commands.RunIDFor(tenant, "overtaken-create", sk, int(e.kcfg.Partitions))
	hdr := commands.Header{RunID: runID, PlatformSessionID: session, TenantID: tenant,
		Actor: events.Actor{Type: "user", ID: tenant}}
	hdr.IdempotencyKey = "overtaking-revoke"
	revoke, err := commands.New(commands.RevokePermissionGrant, hdr, commands.RevokePermissionGrantPayload{GrantID: g.GrantID})
	if err != nil {
		t.Fatal(err)
	}
	hdr.IdempotencyKey = "overtaken-create"
	create, err := commands.New(commands.CreateRun, hdr, commands.CreateRunPayload{AgentID: "ops",
		Input: events.UserInput{Content: "ship"}, SandboxKey: sk, SessionGrants: []events.PermissionGrant(held)})
	if err != nil {
		t.Fatal(err)
	}
	e.produceSigned(st, revoke, 1) // one producer, one partition: the revoke first
	e.produceSigned(st, create, 1)

	if acc := accepted(t, st, runID); len(acc.SessionGrants) != 0 {
		t.Fatalf("the run created after the revoke inherits %+v", acc.SessionGrants)
	}
	evs := listEvents(t, st, runID)
	if len(evs) == 0 || evs[0].Type != events.CommandRejected {
		t.Fatalf("the run's log begins with %+v, want the revoke's refusal", evs)
	}
	refused, err := client.DecodePayload[events.CommandRejectedPayload](evs[0])
	if err != nil || refused.Code != events.CodeRunNotFound || refused.GrantID != g.GrantID {
		t.Fatalf("the refusal %+v %v, want run_not_found naming %s", refused, err, g.GrantID)
	}
	waitPause(t, st, runID, events.PauseAwaitingApproval) // its first deploy asks: no grant covers it
	e.invariants(st)
}
