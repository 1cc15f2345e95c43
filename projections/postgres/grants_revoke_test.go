package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/events"
)

// grantIn applies a platform_session grant of tool in run l, expiring at
// expires (0: never), and returns its id.
func grantIn(l *runLog, tool string, expires int64) string {
	id := events.NewID("grt")
	l.Add(events.Draft{Type: events.PermissionGrantApplied, CommandID: events.NewID("cmd"), Payload: events.PermissionGrant{
		GrantID: id, Scope: events.ScopePlatformSession, ToolName: tool, RuleID: "r", RunID: l.RunID(), Actor: alice,
		ExpiresAt: expires}})
	return id
}

func revokeIn(l *runLog, g events.PermissionGrant, reason string) {
	l.Add(events.Draft{Type: events.PermissionGrantRevoked, CommandID: events.NewID("cmd"), Payload: events.PermissionGrantRevokedPayload{
		GrantID: g.GrantID, ToolName: g.ToolName, RuleID: g.RuleID, Scope: g.Scope, Reason: reason, Actor: alice}})
}

// TestRevokedAndExpiredGrantsAreNotInForce: the granting run's revocation
// marks the row; another run's changes nothing; a grant past its expiry
// (by the database's clock) is not in force, and a new run does not inherit
// either.
func TestRevokedAndExpiredGrantsAreNotInForce(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	a, b := started(t, "acme", "s-1"), started(t, "acme", "s-1")
	future := time.Now().Add(time.Hour).UnixMilli()
	revoked, expired, live := grantIn(a, "shell", 0), grantIn(a, "http", clock+1000), grantIn(a, "git", future)
	g, _ := a.State().Grant(revoked)
	revokeIn(b, g, "not mine to record") // b does not hold it: no row changes
	f.apply(t, offsets{}.records(t, 0, b.Events()...))
	if got, err := f.store.SessionGrantsInForce(ctx, "acme", "s-1"); err != nil || len(got) != 0 {
		t.Fatalf("before the grants' run is read: %+v %v", got, err)
	}
	revokeIn(a, g, "enough")
	f.apply(t, offsets{}.records(t, 1, a.Events()...))
	inForce, err := f.store.SessionGrantsInForce(ctx, "acme", "s-1")
	if err != nil || len(inForce) != 1 || inForce[0].GrantID != live || inForce[0].ExpiresAt == nil ||
		inForce[0].ExpiresAt.UnixMilli() != future {
		t.Fatalf("in force %+v %v, want only %s expiring at %d", inForce, err, live, future)
	}
	inherited, err := f.store.SessionGrants(ctx, "acme", "s-1")
	if err != nil || len(inherited) != 1 || inherited[0].GrantID != live || inherited[0].ExpiresAt != future {
		t.Fatalf("inherited %+v %v", inherited, err)
	}
	row, ok, err := f.store.SessionGrant(ctx, "acme", "s-1", revoked)
	if err != nil || !ok || row.RevokedAt == nil || row.RevokeReason != "enough" || row.RevokedByID != "alice" {
		t.Fatalf("revoked row %+v %v %v", row, ok, err)
	}
	if row, ok, err := f.store.SessionGrant(ctx, "acme", "s-1", expired); err != nil || !ok || row.RevokedAt != nil {
		t.Fatalf("expired row %+v %v %v", row, ok, err)
	}
	if _, ok, err := f.store.SessionGrant(ctx, "globex", "s-1", live); err != nil || ok {
		t.Fatalf("another tenant reads the grant: %v %v", ok, err)
	}
}
