package postgres_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/events/eventstest"
	"github.com/xbot-runtime/xbot/projections/postgres"
)

// sessionRun is a run of session whose events occur from at on.
func sessionRun(tb testing.TB, tenant, session string, at time.Duration, complete bool) *runLog {
	l := newRun(tb, tenant, session)
	l.At(clock + at.Milliseconds())
	l.accept(events.NewID("cmd"), "key-"+l.RunID())
	l.Started("")
	if complete {
		l.assistantMessage(1)
		l.Completed("")
	}
	return l
}

func runIDs(rs []postgres.StreamRun) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.RunID
	}
	return out
}

func TestStreamQueriesOrderASessionsRuns(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	a := sessionRun(t, "acme", "s1", 0, true)
	b := sessionRun(t, "acme", "s1", time.Second, false)
	c := sessionRun(t, "acme", "s1", 2*time.Second, true)
	foreign := sessionRun(t, "globex", "s1", 3*time.Second, false)
	elsewhere := sessionRun(t, "acme", "s2", 4*time.Second, false)
	off := offsets{}
	f.apply(t, off.records(t, 0, eventstest.Interleave(a.Events(), b.Events(), c.Events(), foreign.Events(), elsewhere.Events())...))

	all, err := f.store.StreamSessionRuns(ctx, "acme", "s1", time.Time{}, "", 10)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := runIDs(all), []string{a.RunID(), b.RunID(), c.RunID()}; !reflect.DeepEqual(got, want) {
		t.Fatalf("session runs %v, want %v", got, want)
	}
	if !all[0].Ended() || all[1].Ended() {
		t.Errorf("ended flags: %+v", all)
	}
	rest, err := f.store.StreamSessionRuns(ctx, "acme", "s1", all[0].CreatedAt, all[0].RunID, 1)
	if err != nil || len(rest) != 1 || rest[0].RunID != b.RunID() {
		t.Fatalf("after the first run: %v %v", runIDs(rest), err)
	}

	head, err := f.store.StreamSessionHead(ctx, "acme", "s1")
	if err != nil || head.RunID != b.RunID() {
		t.Fatalf("head %v %v, want the running run %s", head, err, b.RunID())
	}
	n := len(b.Events())
	b.assistantMessage(0)
	b.Completed("")
	f.apply(t, off.records(t, 0, b.Events()[n:]...))
	head, err = f.store.StreamSessionHead(ctx, "acme", "s1")
	if err != nil || head.RunID != c.RunID() || !head.Ended() {
		t.Fatalf("head %v %v, want the last run %s when all ended", head, err, c.RunID())
	}
	_, err = f.store.StreamSessionHead(ctx, "acme", "s3")
	wantNotFound(t, err)
	_, err = f.store.StreamSessionHead(ctx, "initech", "s1")
	wantNotFound(t, err)

	if r, err := f.store.StreamSessionRun(ctx, "acme", "s1", c.RunID()); err != nil || r.RunID != c.RunID() {
		t.Fatalf("session run: %v %v", r, err)
	}
	_, err = f.store.StreamSessionRun(ctx, "acme", "s1", elsewhere.RunID())
	wantNotFound(t, err)
	_, err = f.store.StreamSessionRun(ctx, "acme", "s1", foreign.RunID())
	wantNotFound(t, err)
}

func TestStreamRunEventsDecodesTheLog(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	l, _ := completedRun(t, "acme", "s1")
	f.apply(t, offsets{}.records(t, 0, l.Events()...))
	got, err := f.store.StreamRunEvents(ctx, "acme", l.RunID(), 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	if want := l.Events()[2:5]; !reflect.DeepEqual(got, want) {
		t.Fatalf("events after seq 2:\n got %+v\nwant %+v", got, want)
	}
	if none, err := f.store.StreamRunEvents(ctx, "globex", l.RunID(), 0, 10); err != nil || len(none) != 0 {
		t.Fatalf("another tenant read %d events (%v)", len(none), err)
	}
}
