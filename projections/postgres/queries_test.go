package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/events/eventstest"
	"github.com/xbot-runtime/xbot/projections/postgres"
)

func TestQueriesNeverCrossTenants(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	mine, myCmd := completedRun(t, "acme", "shared-session")
	theirs, theirCmd := completedRun(t, "globex", "shared-session")
	f.apply(t, offsets{}.records(t, 0, eventstest.Interleave(mine.Events(), theirs.Events())...))

	_, err := f.store.GetRun(ctx, "acme", theirs.RunID())
	wantNotFound(t, err)
	_, err = f.store.GetCommand(ctx, "acme", theirCmd)
	wantNotFound(t, err)
	if evs, err := f.store.ListEvents(ctx, "acme", theirs.RunID(), 0, 0, 0); err != nil || len(evs) != 0 {
		t.Fatalf("events of another tenant's run: %v, %v", evs, err)
	}
	runs, _, err := f.store.ListRuns(ctx, postgres.RunFilter{TenantID: "acme", PlatformSessionID: "shared-session"})
	if err != nil || len(runs) != 1 || runs[0].RunID != mine.RunID() {
		t.Fatalf("runs = %v, %v; want only %s", runs, err, mine.RunID())
	}
	if _, err := f.store.GetCommand(ctx, "acme", myCmd); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := f.store.WaitCommand(wctx, "acme", theirCmd); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitCommand for another tenant's command: %v", err)
	}
	if _, _, err := f.store.ListRuns(ctx, postgres.RunFilter{}); err == nil {
		t.Fatal("ListRuns without a tenant succeeded")
	}
}

func TestListRunsPagesThroughEveryRunOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	off := offsets{}
	var logs [][]events.Envelope
	for i := range 23 {
		l := newRun(t, "acme", fmt.Sprintf("s-%d", i%2))
		l.At(clock + int64(i/3)*1000) // three runs share each created_at
		l.accept(events.NewID("cmd"), "k")
		if i%4 == 0 {
			l.Started("")
		}
		logs = append(logs, l.Events())
	}
	other, _ := completedRun(t, "globex", "s-0")
	f.apply(t, off.records(t, 0, eventstest.Interleave(append(logs, other.Events())...)...))

	all := listAll(t, f, postgres.RunFilter{TenantID: "acme", Limit: 4})
	if len(all) != 23 {
		t.Fatalf("listed %d runs, want 23", len(all))
	}
	seen := map[string]bool{}
	for i, r := range all {
		if seen[r.RunID] {
			t.Fatalf("run %s listed twice", r.RunID)
		}
		seen[r.RunID] = true
		if i > 0 && !runBefore(all[i-1], r) {
			t.Fatalf("runs %d and %d out of order: %v %s / %v %s", i-1, i, all[i-1].CreatedAt, all[i-1].RunID, r.CreatedAt, r.RunID)
		}
	}
	running := listAll(t, f, postgres.RunFilter{TenantID: "acme", Status: "running", Limit: 2})
	session := listAll(t, f, postgres.RunFilter{TenantID: "acme", PlatformSessionID: "s-1", Limit: 5})
	if len(running) != 6 || len(session) != 11 {
		t.Fatalf("running %d (want 6), session s-1 %d (want 11)", len(running), len(session))
	}
	for _, bad := range []string{"not base64!", "e30", "bm9wZQ"} {
		_, _, err := f.store.ListRuns(ctx, postgres.RunFilter{TenantID: "acme", After: bad})
		if !errors.Is(err, postgres.ErrInvalidCursor) {
			t.Fatalf("cursor %q: error = %v, want ErrInvalidCursor", bad, err)
		}
	}
}

// runBefore reports whether a comes before b: created_at descending, then run_id.
func runBefore(a, b postgres.Run) bool {
	return a.CreatedAt.After(b.CreatedAt) || (a.CreatedAt.Equal(b.CreatedAt) && strings.Compare(a.RunID, b.RunID) < 0)
}

func listAll(tb testing.TB, f *fixture, filter postgres.RunFilter) []postgres.Run {
	tb.Helper()
	var all []postgres.Run
	for page := 0; ; page++ {
		runs, next, err := f.store.ListRuns(context.Background(), filter)
		if err != nil {
			tb.Fatal(err)
		}
		if len(runs) > filter.Limit || page > 100 {
			tb.Fatalf("page %d has %d runs (limit %d)", page, len(runs), filter.Limit)
		}
		all = append(all, runs...)
		if next == "" {
			return all
		}
		filter.After = next
	}
}

func TestHeartbeats(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	_, err := f.store.LastHeartbeat(ctx, projector)
	wantNotFound(t, err)
	start := time.Now().Add(-time.Minute) // tolerate clock skew between the test and the server
	for _, instance := range []string{"a", "b", "a"} {
		if err := f.store.Heartbeat(ctx, projector, instance); err != nil {
			t.Fatal(err)
		}
	}
	at, err := f.store.LastHeartbeat(ctx, projector)
	if err != nil || at.Before(start) {
		t.Fatalf("last heartbeat = %v, %v", at, err)
	}
	var n int
	if err := f.pool.QueryRow(ctx, "SELECT count(*) FROM projector_heartbeats").Scan(&n); err != nil || n != 2 {
		t.Fatalf("heartbeat rows = %d, %v; want one per instance", n, err)
	}
	_, err = f.store.LastHeartbeat(ctx, "another")
	wantNotFound(t, err)
}
