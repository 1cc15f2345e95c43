package postgres_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/events/eventstest"
	"github.com/xbot-runtime/xbot/projections/postgres"
)

func errorsIsInvalidCursor(err error) bool { return errors.Is(err, postgres.ErrInvalidCursor) }

func TestApprovalsFollowRequestsAndDecisions(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	// a: approved for the run (a grant); b: pending; c: denied; d: another tenant's, pending.
	a, b, c, d := started(t, "acme", "s-a"), started(t, "acme", "s-b"), started(t, "acme", "s-b"), started(t, "globex", "s-a")
	b.At(clock + 1000) // b and c are requested later than a
	c.At(clock + 2000)
	var items [4]string
	for i, l := range []*runLog{a, b, c, d} {
		items[i] = l.startTool(events.ItemCommandExecution, "shell", `{"command":"deploy"}`)
		l.awaitApproval(items[i], "shell", `{"command":"deploy","env":"prod"}`)
	}
	cmd := events.NewID("cmd")
	a.decide(items[0], cmd, "allow", "run")
	a.completeTool(items[0], events.ItemCommandExecution, "shell", "deployed", &events.ExecData{})
	c.decide(items[2], events.NewID("cmd"), "deny", "item") // fails the call as denied_by_user
	f.apply(t, offsets{}.records(t, 0, eventstest.Interleave(a.Events(), b.Events(), c.Events(), d.Events())...))

	got := listApprovals(t, f, postgres.ApprovalFilter{TenantID: "acme", Limit: 50})
	if ids := approvalItems(got); !slices.Equal(ids, []string{items[2], items[1], items[0]}) {
		t.Fatalf("approvals %v, want c, b, a (newest request first)", ids)
	}
	req, dec := a.First(events.ItemAwaitingApproval, items[0]), a.First(events.ApprovalDecisionSubmitted, items[0])
	want := postgres.Approval{RunID: a.RunID(), ItemID: items[0], TenantID: "acme", PlatformSessionID: "s-a",
		ItemType: "command_execution", Status: "resolved", ToolName: "shell", Decision: "allow", Scope: "run",
		ActorType: "user", ActorID: "u-9", Reason: "looks safe", CommandID: cmd, RequestedSeq: req.Seq,
		ResolvedSeq: ptr(dec.Seq), RequestedAt: time.UnixMilli(req.OccurredAt).UTC(),
		ResolvedAt: ptr(time.UnixMilli(dec.OccurredAt).UTC())}
	assertJSON(t, got[2].Input, `{"command":"deploy","env":"prod"}`)
	got[2].Input = nil
	if !approvalEqual(got[2], want) {
		t.Fatalf("approval =\n%+v, want\n%+v", got[2], want)
	}
	if got[1].Status != "pending" || got[1].Decision != "" || got[1].ResolvedAt != nil || got[1].ResolvedSeq != nil {
		t.Fatalf("pending approval %+v", got[1])
	}
	if got[0].Status != "resolved" || got[0].Decision != "deny" || got[0].Scope != "item" {
		t.Fatalf("denied approval %+v", got[0])
	}
	for _, tc := range []struct {
		filter postgres.ApprovalFilter
		want   []string
	}{
		{postgres.ApprovalFilter{TenantID: "acme", Status: "pending"}, []string{items[1]}},
		{postgres.ApprovalFilter{TenantID: "acme", Status: "resolved"}, []string{items[2], items[0]}},
		{postgres.ApprovalFilter{TenantID: "acme", RunID: c.RunID()}, []string{items[2]}},
		{postgres.ApprovalFilter{TenantID: "acme", RunID: d.RunID()}, nil},
		{postgres.ApprovalFilter{TenantID: "globex", Status: "pending"}, []string{items[3]}},
	} {
		tc.filter.Limit = 10
		if ids := approvalItems(listApprovals(t, f, tc.filter)); !slices.Equal(ids, tc.want) {
			t.Fatalf("%+v: %v, want %v", tc.filter, ids, tc.want)
		}
	}
	grants, err := f.store.ListPermissionGrants(ctx, "acme", "s-a")
	grant := a.First(events.PermissionGrantApplied, "")
	if err != nil || len(grants) != 1 || grants[0] != (postgres.PermissionGrant{RunID: a.RunID(), Seq: grant.Seq,
		TenantID: "acme", PlatformSessionID: "s-a", ItemID: items[0], CommandID: cmd, Scope: "run", ToolName: "shell",
		GrantedAt: time.UnixMilli(grant.OccurredAt).UTC(), GrantID: eventstest.GrantID(cmd), RuleID: "rule-shell",
		ActorType: "user", ActorID: "u-9"}) {
		t.Fatalf("grants = %+v, %v", grants, err)
	}
	if other, err := f.store.ListPermissionGrants(ctx, "globex", "s-a"); err != nil || len(other) != 0 {
		t.Fatalf("globex grants = %v, %v", other, err)
	}
}

func approvalEqual(a, b postgres.Approval) bool {
	return a.RunID == b.RunID && a.ItemID == b.ItemID && a.TenantID == b.TenantID &&
		a.PlatformSessionID == b.PlatformSessionID && a.ItemType == b.ItemType && a.Status == b.Status &&
		a.ToolName == b.ToolName && a.Decision == b.Decision && a.Scope == b.Scope && a.ActorType == b.ActorType &&
		a.ActorID == b.ActorID && a.Reason == b.Reason && a.CommandID == b.CommandID &&
		a.RequestedSeq == b.RequestedSeq && *a.ResolvedSeq == *b.ResolvedSeq && a.RequestedAt.Equal(b.RequestedAt) &&
		a.ResolvedAt.Equal(*b.ResolvedAt)
}

func approvalItems(as []postgres.Approval) []string {
	var out []string
	for _, a := range as {
		out = append(out, a.ItemID)
	}
	return out
}

// A second request for an item makes its approval pending again.
func TestApprovalRequestedAgainIsPending(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	l := started(t, "acme", "")
	item := l.startTool(events.ItemCommandExecution, "shell", `{}`)
	l.awaitApproval(item, "shell", `{}`)
	l.decide(item, events.NewID("cmd"), "allow", "item")
	off := offsets{}
	f.apply(t, off.records(t, 0, l.Events()...))
	mark := len(l.Events())
	l.awaitApproval(item, "shell", `{"again":true}`)
	f.apply(t, off.records(t, 0, l.Events()[mark:]...))
	got := listApprovals(t, f, postgres.ApprovalFilter{TenantID: "acme", Limit: 10})
	if len(got) != 1 || got[0].Status != "pending" || got[0].Decision != "" || got[0].ResolvedSeq != nil ||
		got[0].RequestedSeq != l.Events()[mark].Seq {
		t.Fatalf("approvals = %+v", got)
	}
	assertJSON(t, got[0].Input, `{"again":true}`)
}

func TestListApprovalsPagesThroughEveryApprovalOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	var logs [][]events.Envelope
	for i := range 11 {
		l := started(t, "acme", "")
		l.At(clock + int64(i/3)*1000) // three requests share each time
		item := l.startTool(events.ItemToolCall, "deploy", `{}`)
		l.awaitApproval(item, "deploy", `{}`)
		logs = append(logs, l.Events())
	}
	f.apply(t, offsets{}.records(t, 0, eventstest.Interleave(logs...)...))
	all := listApprovals(t, f, postgres.ApprovalFilter{TenantID: "acme", Status: "pending", Limit: 3})
	seen := map[string]bool{}
	for i, a := range all {
		if seen[a.ItemID] {
			t.Fatalf("approval %s listed twice", a.ItemID)
		}
		seen[a.ItemID] = true
		if i > 0 && !approvalBefore(all[i-1], a) {
			t.Fatalf("approvals %d and %d out of order", i-1, i)
		}
	}
	if len(all) != 11 {
		t.Fatalf("listed %d approvals, want 11", len(all))
	}
	two := started(t, "acme", "")
	two.startTool(events.ItemToolCall, "a", `{}`)
	two.startTool(events.ItemToolCall, "b", `{}`)
	f.apply(t, offsets{}.records(t, 9, two.Events()...))
	_, itemCursor, err := f.store.ListItems(ctx, postgres.ItemFilter{TenantID: "acme", RunID: two.RunID(), Limit: 1})
	if err != nil || itemCursor == "" {
		t.Fatalf("item cursor %q, %v", itemCursor, err)
	}
	for _, bad := range []string{"%%%", "e30", itemCursor} {
		if _, _, err := f.store.ListApprovals(ctx, postgres.ApprovalFilter{TenantID: "acme", After: bad}); !errorsIsInvalidCursor(err) {
			t.Fatalf("cursor %q: error = %v, want ErrInvalidCursor", bad, err)
		}
	}
	if _, _, err := f.store.ListApprovals(ctx, postgres.ApprovalFilter{}); err == nil {
		t.Fatal("ListApprovals without a tenant succeeded")
	}
}

func approvalBefore(a, b postgres.Approval) bool {
	if !a.RequestedAt.Equal(b.RequestedAt) {
		return a.RequestedAt.After(b.RequestedAt)
	}
	return a.RunID < b.RunID || (a.RunID == b.RunID && a.ItemID < b.ItemID)
}

// pendingApprovalPage projects two pending approvals and returns the first
// page of one and its cursor.
func pendingApprovalPage(tb testing.TB, f *fixture) ([]postgres.Approval, string) {
	tb.Helper()
	var logs [][]events.Envelope
	for range 2 {
		l := started(tb, "acme", "")
		item := l.startTool(events.ItemToolCall, "deploy", `{}`)
		l.awaitApproval(item, "deploy", `{}`)
		logs = append(logs, l.Events())
	}
	f.apply(tb, offsets{}.records(tb, 7, eventstest.Interleave(logs...)...))
	page, next, err := f.store.ListApprovals(context.Background(), postgres.ApprovalFilter{TenantID: "acme", Limit: 1})
	if err != nil || next == "" {
		tb.Fatalf("page %v, next %q, %v", page, next, err)
	}
	return page, next
}

func listApprovals(tb testing.TB, f *fixture, filter postgres.ApprovalFilter) []postgres.Approval {
	tb.Helper()
	var all []postgres.Approval
	for page := 0; ; page++ {
		as, next, err := f.store.ListApprovals(context.Background(), filter)
		if err != nil {
			tb.Fatal(err)
		}
		if len(as) > filter.Limit || page > 100 {
			tb.Fatalf("page %d has %d approvals (limit %d)", page, len(as), filter.Limit)
		}
		all = append(all, as...)
		if next == "" {
			return all
		}
		filter.After = next
	}
}
