package postgres_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/events/eventstest"
	"github.com/xbot-runtime/xbot/projections/postgres"
)

// sessionRuns are three runs of session s-1 created a second apart, the
// last one still running, plus a run of another tenant in a session of the
// same name and a run without a session.
func sessionRuns(tb testing.TB) (first, second, third, other, none *runLog) {
	first, _ = completedRun(tb, "acme", "s-1")
	second, _ = completedRunAt(tb, "acme", "s-1", clock+1000)
	third = newRun(tb, "acme", "s-1")
	third.At(clock + 2000)
	third.accept(events.NewID("cmd"), "k3")
	third.Started("")
	other, _ = completedRun(tb, "globex", "s-1")
	none, _ = completedRun(tb, "acme", "")
	return first, second, third, other, none
}

func TestSessionsAggregateTheirRuns(t *testing.T) {
	t.Parallel()
	f, reversed := newFixture(t), newFixture(t)
	ctx := context.Background()
	first, second, third, other, none := sessionRuns(t)
	off := offsets{}
	p0 := off.records(t, 0, eventstest.Interleave(first.Events(), other.Events(), none.Events())...)
	p1 := off.records(t, 1, second.Events()...)
	p2 := off.records(t, 2, third.Events()...)
	f.apply(t, p0)
	f.apply(t, p1)
	f.apply(t, p2)
	reversed.apply(t, p2) // partitions apply independently, in any order
	reversed.apply(t, p1)
	reversed.apply(t, p0)

	want := postgres.Session{TenantID: "acme", PlatformSessionID: "s-1", FirstRunID: first.RunID(), LastRunID: third.RunID(),
		LastRunStatus: "running", RunCount: 3, FirstRunAt: time.UnixMilli(first.Events()[0].OccurredAt).UTC(),
		LastActivityAt: time.UnixMilli(third.Events()[1].OccurredAt).UTC()}
	if got, err := f.store.GetSession(ctx, "acme", "s-1"); err != nil || got != want {
		t.Fatalf("session =\n%+v, %v; want\n%+v", got, err, want)
	}
	if l, r := f.checksumViews(t), reversed.checksumViews(t); l["sessions"] != r["sessions"] {
		t.Fatalf("sessions depend on the order of partitions: %s / %s", l["sessions"], r["sessions"])
	}
	// The latest run ends: the session follows.
	third.Completed("")
	f.apply(t, off.records(t, 2, third.Last()))
	want.LastRunStatus, want.LastActivityAt = "completed", time.UnixMilli(third.Events()[2].OccurredAt).UTC()
	if got, err := f.store.GetSession(ctx, "acme", "s-1"); err != nil || got != want {
		t.Fatalf("session after completion = %+v, %v", got, err)
	}
	if got, err := f.store.GetSession(ctx, "globex", "s-1"); err != nil || got.RunCount != 1 || got.FirstRunID != other.RunID() {
		t.Fatalf("globex session = %+v, %v", got, err)
	}
	_, err := f.store.GetSession(ctx, "acme", "")
	wantNotFound(t, err)
	_, err = f.store.GetSession(ctx, "initech", "s-1")
	wantNotFound(t, err)
}

// Runs of one session on different partitions, applied concurrently: the
// sessions row counts every run (its refresh is serialised per session).
func TestConcurrentPartitionsShareASession(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const partitions, rounds = 6, 5
	off := offsets{}
	for round := range rounds {
		var wg sync.WaitGroup
		errs := make(chan error, partitions)
		for p := range int32(partitions) {
			l, _ := completedRun(t, "acme", "shared")
			recs := off.records(t, p, l.Events()...)
			wg.Go(func() { errs <- f.store.ApplyBatch(context.Background(), projector, topic, recs) })
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		s, err := f.store.GetSession(context.Background(), "acme", "shared")
		if err != nil || s.RunCount != int64((round+1)*partitions) {
			t.Fatalf("round %d: session %+v, %v; want %d runs", round, s, err, (round+1)*partitions)
		}
	}
	single := newFixture(t)
	single.apply(t, mustRecords(t, f))
	if a, b := f.checksumViews(t)["sessions"], single.checksumViews(t)["sessions"]; a != b {
		t.Fatalf("concurrent sessions %s, sequential %s", a, b)
	}
}

// mustRecords reads back every stored envelope of f as records of one
// partition, in seq order per run.
func mustRecords(tb testing.TB, f *fixture) []postgres.Record {
	tb.Helper()
	rows, err := f.pool.Query(context.Background(), "SELECT envelope::text FROM run_events ORDER BY run_id, seq")
	if err != nil {
		tb.Fatal(err)
	}
	defer rows.Close()
	var out []postgres.Record
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			tb.Fatal(err)
		}
		out = append(out, postgres.Record{Partition: 0, Offset: int64(len(out)), Value: []byte(v)})
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}
