package postgres_test

import (
	"context"
	"maps"
	"slices"
	"testing"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/events/eventstest"
	"github.com/xbot-runtime/xbot/projections/postgres"
)

var alice = events.Actor{Type: "user", ID: "alice"}

// request has policy rule ask for approval of started item's call of tool.
func (l *runLog) request(item, tool, rule string) {
	l.Ask(item, events.ToolCallRef{Name: tool, Arguments: `{"q":1}`}, rule, "rule "+rule+" asks")
}

// allowFor is alice's allow of item with scope (run or platform_session)
// by cmd, as admission applies it: the grant resolves every other item of
// the run awaiting the same tool and rule.
func (l *runLog) allowFor(cmd, item, scope, key string) {
	l.Decide(eventstest.Decision{CommandID: cmd, ItemID: item, Decision: events.DecisionAllow, Scope: scope,
		Reason: "fine", Actor: alice, Applied: events.CommandAppliedPayload{IdempotencyKey: key}})
}

// approvalLifecycle: in run a, x and y await the same rule and one
// run-scoped allow resolves both; z awaits until the run expires. Run b is
// cancelled while w awaits. Run c's v is still pending.
func approvalLifecycle(t *testing.T) (a, b, c *runLog, items map[string]string) {
	a, b, c = started(t, "acme", "s-1"), started(t, "acme", "s-2"), started(t, "acme", "s-3")
	items = map[string]string{}
	for _, name := range []string{"x", "y", "z"} {
		items[name] = a.startTool(events.ItemToolCall, "deploy", `{}`)
	}
	a.request(items["x"], "deploy", "prod")
	a.request(items["y"], "deploy", "prod")
	a.request(items["z"], "deploy", "db")
	a.Paused(events.PauseAwaitingApproval, items["x"], items["y"], items["z"])
	a.allowFor("cmd_allow", items["x"], events.ScopeRun, "k-allow") // y awaits the same rule
	// The allowed calls run while z still awaits.
	for _, name := range []string{"x", "y"} {
		a.completeTool(items[name], events.ItemToolCall, "deploy", "deployed", nil)
	}
	a.ItemFailed(items["z"], events.ItemToolCall, events.ToolErrExpired, "no decision in time")
	a.Add(events.Draft{Type: events.RunExpired, Payload: events.RunExpiredPayload{PauseReason: events.PauseAwaitingApproval, PauseTTLMs: 1000}})
	items["w"] = b.startTool(events.ItemToolCall, "deploy", `{}`)
	b.request(items["w"], "deploy", "prod")
	b.Paused(events.PauseAwaitingApproval, items["w"])
	b.ItemFailed(items["w"], events.ItemToolCall, events.ToolErrCancelled, "the run was cancelled")
	b.Cancelled("", "")
	items["v"] = c.startTool(events.ItemToolCall, "deploy", `{}`)
	c.request(items["v"], "deploy", "prod")
	c.Paused(events.PauseAwaitingApproval, items["v"])
	return a, b, c, items
}

func TestApprovalLifecycle(t *testing.T) {
	t.Parallel()
	a, b, c, items := approvalLifecycle(t)
	recs := offsets{}.records(t, 0, eventstest.Interleave(a.Events(), b.Events(), c.Events())...)
	oneBatch, byEvent := newFixture(t), newFixture(t)
	oneBatch.apply(t, recs)
	byEvent.oneByOne(t, recs) // every change hits a stored row
	if x, y := oneBatch.checksumViews(t), byEvent.checksumViews(t); !maps.Equal(x, y) {
		t.Fatalf("one batch and event by event differ:\n%v\n%v", x, y)
	}
	got := map[string]postgres.Approval{}
	for _, ap := range listApprovals(t, byEvent, postgres.ApprovalFilter{TenantID: "acme", Limit: 10}) {
		got[ap.ItemID] = ap
	}
	runOf := map[string]*runLog{"x": a, "y": a, "z": a, "w": b, "v": c}
	for name, want := range map[string]string{"x": "resolved", "y": "resolved", "z": "expired", "w": "cancelled",
		"v": "pending"} {
		if ap := got[items[name]]; ap.Status != want || ap.ApprovalID != eventstest.ApprovalID(runOf[name].RunID(), items[name]) {
			t.Fatalf("approval %s: %+v, want %s", name, ap, want)
		}
	}
	x, y, z := got[items["x"]], got[items["y"]], got[items["z"]]
	if x.RuleID != "prod" || x.RequestReason != "rule prod asks" || x.Decision != "allow" || x.Scope != "run" ||
		x.Reason != "fine" || x.CommandID != "cmd_allow" || x.GrantID != "" || x.ActorID != "alice" {
		t.Fatalf("approval x %+v", x)
	}
	if y.GrantID != eventstest.GrantID("cmd_allow") || y.Decision != "allow" || y.CommandID != "cmd_allow" {
		t.Fatalf("approval y, resolved by x's grant: %+v", y)
	}
	if failed := a.First(events.ItemFailed, items["z"]); z.Decision != "" || *z.ResolvedSeq != failed.Seq {
		t.Fatalf("approval z %+v, want resolved at seq %d", z, failed.Seq)
	}
	pending := listApprovals(t, byEvent, postgres.ApprovalFilter{TenantID: "acme", Status: "pending", Limit: 10})
	if ids := approvalItems(pending); !slices.Equal(ids, []string{items["v"]}) {
		t.Fatalf("pending %v, want only v", ids)
	}
	if r := getRun(t, byEvent, "acme", a.RunID()); r.Status != "expired" || r.PauseReason != "" {
		t.Fatalf("run a %s (%s), want expired", r.Status, r.PauseReason)
	}
}

// A run that ends while an approval is pending closes it, even in a log
// where the item was not failed first (events.Fold refuses such logs now;
// the projector does not fold, and older logs may hold them).
func TestRunEndClosesPendingApprovals(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	l := started(t, "acme", "")
	item := l.startTool(events.ItemToolCall, "deploy", `{}`)
	l.request(item, "deploy", "prod")
	l.Paused(events.PauseAwaitingApproval, item)
	off := offsets{}
	f.apply(t, off.records(t, 0, l.Events()...))
	expired, err := events.Draft{Type: events.RunExpired, Payload: events.RunExpiredPayload{
		PauseReason: events.PauseAwaitingApproval}}.Seal(l.Identity(), l.State().LastSeq+1, events.NewID("evt"), l.Now())
	if err != nil {
		t.Fatal(err)
	}
	f.apply(t, off.records(t, 0, expired))
	got := listApprovals(t, f, postgres.ApprovalFilter{TenantID: "acme", Limit: 10})
	if len(got) != 1 || got[0].Status != "expired" || *got[0].ResolvedSeq != expired.Seq {
		t.Fatalf("approvals %+v", got)
	}
	if r := getRun(t, f, "acme", l.RunID()); r.Status != "expired" {
		t.Fatalf("run status %s, want expired", r.Status)
	}
}

func TestSessionGrants(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	first, second := started(t, "acme", "s-1"), started(t, "acme", "s-1")
	second.At(clock + 5000)
	elsewhere, foreign := started(t, "acme", "s-2"), started(t, "globex", "s-1")
	var want []events.PermissionGrant
	for _, g := range []struct {
		l           *runLog
		scope, tool string
	}{{first, events.ScopePlatformSession, "shell"}, {first, events.ScopeRun, "git"},
		{second, events.ScopePlatformSession, "http"}, {elsewhere, events.ScopePlatformSession, "shell"},
		{foreign, events.ScopePlatformSession, "shell"}} {
		item := g.l.startTool(events.ItemToolCall, g.tool, `{}`)
		g.l.request(item, g.tool, "r-"+g.tool)
		g.l.Paused(events.PauseAwaitingApproval, item)
		cmd := events.NewID("cmd")
		g.l.allowFor(cmd, item, g.scope, "k-"+cmd)
		if g.l.Identity().TenantID == "acme" && g.l.Identity().PlatformSessionID == "s-1" && g.scope == events.ScopePlatformSession {
			want = append(want, events.PermissionGrant{GrantID: eventstest.GrantID(cmd), Scope: g.scope, ToolName: g.tool,
				RuleID: "r-" + g.tool, RunID: g.l.RunID(), ItemID: item, Actor: alice})
		}
	}
	f.apply(t, offsets{}.records(t, 0, eventstest.Interleave(second.Events(), first.Events(), elsewhere.Events(), foreign.Events())...))
	got, err := f.store.SessionGrants(ctx, "acme", "s-1")
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("session grants\n%+v, %v; want\n%+v", got, err, want)
	}
	all, err := f.store.ListPermissionGrants(ctx, "acme", "s-1")
	if err != nil || len(all) != 3 || all[1].GrantID == "" || all[1].Scope != events.ScopeRun || all[1].RuleID != "r-git" ||
		all[1].ActorID != "alice" {
		t.Fatalf("all grants of s-1: %+v, %v", all, err)
	}
	if none, err := f.store.SessionGrants(ctx, "acme", ""); err != nil || len(none) != 0 {
		t.Fatalf("grants of no session: %v, %v", none, err)
	}
}

// The run a follow-up created is read from command.applied; a duplicate of
// the follow-up reads its original's.
func TestCommandCreatedRunID(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	l, _ := completedRun(t, "acme", "s-1")
	l.CommandApplied("cmd_follow", events.CommandAppliedPayload{CommandType: "AppendUserInput",
		IdempotencyKey: "k-follow", CreatedRunID: "run_next"})
	l.CommandDuplicate("cmd_again", events.CommandDuplicatePayload{CommandType: "AppendUserInput",
		IdempotencyKey: "k-follow", OriginalCommandID: "cmd_follow", OriginalOutcome: "applied"})
	l.CommandRejected("cmd_steer", events.CommandRejectedPayload{CommandType: "AppendUserInput",
		IdempotencyKey: "k-steer", Code: "invalid_state"})
	off := offsets{}
	f.apply(t, off.records(t, 0, l.Events()...))
	for id, want := range map[string]string{"cmd_follow": "run_next", "cmd_again": "run_next", "cmd_steer": ""} {
		if c := f.command(t, "acme", id); c.CreatedRunID != want {
			t.Fatalf("command %s created run %q, want %q", id, c.CreatedRunID, want)
		}
	}
}
