package postgres_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/projections/postgres"
)

// TestARevokeWaitsForTheCreatesHoldingTheSession: a create that read the
// session's grants holds the session until its CreateRun is sent; a revoke
// of one of them waits for it and then lists its run, and every create after
// the revoke reads the grant no more, before the log says it is revoked. A
// create that sent nothing leaves no claim.
func TestARevokeWaitsForTheCreatesHoldingTheSession(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	a := started(t, "acme", "s-1")
	g, kept := grantIn(a, "shell", 0), grantIn(a, "git", 0)
	f.apply(t, offsets{}.records(t, 0, a.Events()...))

	hold, grants, err := f.store.HoldSession(ctx, "acme", "s-1", "run_inflight")
	if hold != nil {
		// A failure below leaves the hold's connection out of the pool,
		// which the fixture's cleanup would wait for.
		t.Cleanup(func() { _ = hold.Release(context.Background(), false) })
	}
	if err != nil || !slices.Equal(grantIDs(grants), []string{g, kept}) {
		t.Fatalf("the create's grants %+v %v, want %s and %s", grants, err, g, kept)
	}
	type result struct {
		runs []string
		err  error
	}
	revoked, done := make(chan result, 1), make(chan struct{})
	go func() {
		defer close(done)
		runs, err := f.store.RevokeSessionGrant(ctx, "acme", "s-1", g)
		revoked <- result{runs, err}
	}()
	t.Cleanup(func() { // the revoke ends before the fixture's pool closes
		_ = hold.Release(context.Background(), false)
		<-done
	})
	eventually.Succeeds(t, 10*time.Second, "the revoke waits for the session's lock", func() error {
		var waiting int
		if err := f.pool.QueryRow(ctx, `SELECT count(*) FROM pg_locks
WHERE locktype = 'advisory' AND NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`).Scan(&waiting); err != nil {
			return err
		}
		if waiting != 1 {
			return fmt.Errorf("%d advisory locks waiting", waiting)
		}
		return nil
	})
	select {
	case r := <-revoked:
		t.Fatalf("the revoke ended while a create held the session: %+v", r)
	default:
	}
	if err := hold.Release(ctx, true); err != nil {
		t.Fatal(err)
	}
	if err := hold.Release(ctx, true); err != nil {
		t.Errorf("a second release: %v", err)
	}
	r := <-revoked
	if r.err != nil || !slices.Equal(r.runs, []string{"run_inflight"}) {
		t.Fatalf("the revoke lists %v %v, want the create's run", r.runs, r.err)
	}

	// From the mark on, the grant is neither handed on nor listed; the log
	// has not revoked it yet, and the row says so.
	later, grants, err := f.store.HoldSession(ctx, "acme", "s-1", "run_later")
	if err != nil || !slices.Equal(grantIDs(grants), []string{kept}) {
		t.Fatalf("a create after the revoke reads %+v %v, want only %s", grants, err, kept)
	}
	if err := later.Release(ctx, true); err != nil {
		t.Fatal(err)
	}
	if inForce, err := f.store.SessionGrantsInForce(ctx, "acme", "s-1"); err != nil || len(inForce) != 1 || inForce[0].GrantID != kept {
		t.Errorf("the session lists %+v %v, want only %s", inForce, err, kept)
	}
	if row, ok, err := f.store.SessionGrant(ctx, "acme", "s-1", g); err != nil || !ok || row.RevokedAt != nil {
		t.Errorf("the grant's row %+v %v %v, want it there and not revoked by the log yet", row, ok, err)
	}

	dropped, _, err := f.store.HoldSession(ctx, "acme", "s-1", "run_dropped")
	if err != nil {
		t.Fatal(err)
	}
	if err := dropped.Release(ctx, false); err != nil {
		t.Fatal(err)
	}
	retry, _, err := f.store.HoldSession(ctx, "acme", "s-1", "run_inflight") // a retry of a sent create, not sent
	if err != nil {
		t.Fatal(err)
	}
	if err := retry.Release(ctx, false); err != nil {
		t.Fatal(err)
	}
	runs, err := f.store.RevokeSessionGrant(ctx, "acme", "s-1", g) // again: harmless
	if err != nil || !slices.Equal(runs, []string{"run_inflight", "run_later"}) {
		t.Errorf("revoking again lists %v %v, want the two sent creates' runs (the unsent retry keeps its run's)", runs, err)
	}
	if other, grants, err := f.store.HoldSession(ctx, "globex", "s-1", "run_other"); err != nil || len(grants) != 0 {
		t.Errorf("another tenant's session of the same name reads %+v %v", grants, err)
	} else if err := other.Release(ctx, true); err != nil {
		t.Error(err)
	}
}

// TestTheProjectorPrunesTheClaimsOfRunsItHolds: a run's claim stands only
// until the read model holds the run; the projector's check beside its
// batches then deletes it, so that the claims do not grow with every
// create, and a revoke still reaches the run through the read model. A
// claim whose run the read model does not hold stays.
func TestTheProjectorPrunesTheClaimsOfRunsItHolds(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	seen, other := newRun(t, "acme", "s-1"), newRun(t, "acme", "s-2")
	claim := func(session, runID string) {
		t.Helper()
		hold, _, err := f.store.HoldSession(ctx, "acme", session, runID)
		if err != nil {
			t.Fatal(err)
		}
		if err := hold.Release(ctx, true); err != nil {
			t.Fatal(err)
		}
	}
	claim("s-1", seen.RunID())
	claim("s-1", "run_unseen")
	claim("s-1", other.RunID()) // the read model will hold it in another session
	claims := func() []string {
		t.Helper()
		runs, err := f.store.RevokeSessionGrant(ctx, "acme", "s-1", "grant_x")
		if err != nil {
			t.Fatal(err)
		}
		return runs
	}
	postgres.PruneRunClaims(ctx, f.store)
	all := []string{seen.RunID(), other.RunID(), "run_unseen"}
	slices.Sort(all)
	if got := claims(); !slices.Equal(got, all) {
		t.Fatalf("before the read model holds a run, the claims are %v, want %v", got, all)
	}

	seen.accept(events.NewID("cmd"), "k-seen")
	other.accept(events.NewID("cmd"), "k-other")
	f.apply(t, offsets{}.records(t, 0, append(seen.Events(), other.Events()...)...))
	postgres.PruneRunClaims(ctx, f.store)
	want := []string{other.RunID(), "run_unseen"}
	slices.Sort(want)
	if got := claims(); !slices.Equal(got, want) {
		t.Errorf("after the prune the claims are %v, want %v", got, want)
	}
	runs, _, err := f.store.ListRuns(ctx, postgres.RunFilter{TenantID: "acme", PlatformSessionID: "s-1"})
	if err != nil || len(runs) != 1 || runs[0].RunID != seen.RunID() {
		t.Errorf("the session's runs in the read model %+v %v, want %s", runs, err, seen.RunID())
	}
}

func grantIDs(gs []events.PermissionGrant) []string {
	ids := make([]string, len(gs))
	for i, g := range gs {
		ids[i] = g.GrantID
	}
	return ids
}

// TestAHoldOutlivesTheServersIdleTimeout: a hold is idle in its transaction
// while its CreateRun is sent. A server whose
// idle_in_transaction_session_timeout is shorter than the send would end it
// and its lock in the middle of ordinary sends; the hold sets that timeout
// to its own bound for its transaction (TestAHungHoldEndsAfterItsBound).
func TestAHoldOutlivesTheServersIdleTimeout(t *testing.T) {
	t.Parallel()
	f, g := sessionWithAGrant(t)
	ctx := context.Background()
	const app = "xbot-idle-hold"
	store := f.storeWith(t, func(c *pgxpool.Config) {
		c.ConnConfig.RuntimeParams["idle_in_transaction_session_timeout"] = "50" // ms
		c.ConnConfig.RuntimeParams["application_name"] = app
	})
	hold, _, err := store.HoldSession(ctx, "acme", "s-1", "run_held")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = hold.Release(context.Background(), false) })
	// The server's clock says how long the hold has been idle: ten times its
	// timeout, and the backend is still there.
	eventually.Succeeds(t, 10*time.Second, "the hold idle for 500 ms", func() error {
		var idle float64
		err := f.pool.QueryRow(ctx, `SELECT extract(epoch FROM clock_timestamp() - state_change) FROM pg_stat_activity
WHERE application_name = $1 AND state = 'idle in transaction'`, app).Scan(&idle)
		if err != nil {
			return fmt.Errorf("no hold idle in its transaction: %w", err)
		}
		if idle < 0.5 {
			return fmt.Errorf("idle for %.3f s", idle)
		}
		return nil
	})
	if err := hold.Release(ctx, true); err != nil {
		t.Fatalf("the hold ended before its release: %v", err)
	}
	if runs, err := f.store.RevokeSessionGrant(ctx, "acme", "s-1", g); err != nil || !slices.Equal(runs, []string{"run_held"}) {
		t.Errorf("the revoke lists %v %v, want the held create's run", runs, err)
	}
}

// TestAHungHoldEndsAfterItsBound: a hold whose API process never releases
// it (hung in the middle of a send) is ended by the server once idle for
// the hold's bound; a revoke waiting for it then goes on, and lists the
// hold's run, whose claim was committed before the lock was taken. The
// hold's release afterwards says its transaction is gone.
func TestAHungHoldEndsAfterItsBound(t *testing.T) {
	t.Parallel()
	f, g := sessionWithAGrant(t)
	ctx := context.Background()
	hung := f.storeWith(t, func(*pgxpool.Config) {})
	postgres.SetHoldIdleTimeout(hung, 200*time.Millisecond)
	hold, _, err := hung.HoldSession(ctx, "acme", "s-1", "run_hung")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = hold.Release(context.Background(), false) })
	rctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if runs, err := f.store.RevokeSessionGrant(rctx, "acme", "s-1", g); err != nil || !slices.Equal(runs, []string{"run_hung"}) {
		t.Fatalf("the revoke behind a hung hold: %v %v, want it to list run_hung", runs, err)
	}
	if err := hold.Release(ctx, true); err == nil {
		t.Error("the release of a hold the server ended reports no error")
	}
	if runs, err := f.store.RevokeSessionGrant(ctx, "acme", "s-1", g); err != nil || !slices.Equal(runs, []string{"run_hung"}) {
		t.Errorf("after the release the claims are %v %v, want run_hung kept", runs, err)
	}
}

// sessionWithAGrant is a view holding session s-1 of tenant acme with one
// run in it that gave a session grant, and the grant's id.
func sessionWithAGrant(t *testing.T) (*fixture, string) {
	t.Helper()
	f := newFixture(t)
	a := started(t, "acme", "s-1")
	g := grantIn(a, "shell", 0)
	f.apply(t, offsets{}.records(t, 0, a.Events()...))
	return f, g
}
