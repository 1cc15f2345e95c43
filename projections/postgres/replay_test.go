package postgres_test

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/events/eventstest"
	"github.com/xbot-runtime/xbot/projections/postgres"
)

// mixedBatch is a realistic partition slice: three runs interleaved, one
// completed, one cancelled, one refused before being accepted.
func mixedBatch(tb testing.TB, off offsets, partition int32) []postgres.Record {
	a, _ := completedRun(tb, "acme", "s-1")
	b := newRun(tb, "acme", "s-2")
	b.accept(events.NewID("cmd"), "create-b")
	cancel := events.NewID("cmd")
	b.CommandApplied(cancel, events.CommandAppliedPayload{CommandType: "CancelRun", IdempotencyKey: "x"})
	c := newRun(tb, "globex", "")
	c.CommandRejected(events.NewID("cmd"), events.CommandRejectedPayload{CommandType: "CreateRun",
		IdempotencyKey: "c", Code: "unknown_agent"})
	c.accept(events.NewID("cmd"), "create-c")
	return off.records(tb, partition, eventstest.Interleave(a.Events(), b.Events(), c.Events())...)
}

func TestReapplyingABatchChangesNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	off := offsets{}
	recs := append(mixedBatch(t, off, 0), mixedBatch(t, off, 1)...)
	f.apply(t, recs)
	before := f.checksumTables(t)
	f.apply(t, recs)
	f.apply(t, recs[len(recs)/3:]) // a redelivered tail
	if after := f.checksumTables(t); !maps.Equal(before, after) {
		t.Fatalf("re-applying changed the tables:\nbefore %v\nafter  %v", before, after)
	}
}

// TestRebuildEqualsLive projects the same records live (small batches) and
// as a rebuild (one batch, into an empty database): the views are equal.
func TestRebuildEqualsLive(t *testing.T) {
	t.Parallel()
	live, rebuilt := newFixture(t), newFixture(t)
	off := offsets{}
	recs := append(mixedBatch(t, off, 0), mixedBatch(t, off, 0)...)
	for i := 0; i < len(recs); i += 3 {
		live.apply(t, recs[i:min(i+3, len(recs))])
	}
	rebuilt.apply(t, recs)
	if l, r := live.checksumViews(t), rebuilt.checksumViews(t); !maps.Equal(l, r) {
		t.Fatalf("rebuilt view differs:\nlive    %v\nrebuilt %v", l, r)
	}
}

func TestGapFailsTheWholeBatch(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	off := offsets{}
	a, _ := completedRun(t, "acme", "")
	f.apply(t, off.records(t, 0, a.Events()[:3]...))
	before := f.checksumTables(t)

	b, _ := completedRun(t, "acme", "")
	cases := map[string]struct {
		recs []postgres.Record
		want events.SeqGapError
	}{
		"gap after the stored seq": {
			recs: off.records(t, 0, slices.Concat(b.Events(), a.Events()[4:])...),
			want: events.SeqGapError{RunID: a.RunID(), Expected: 4, Actual: 5}},
		"gap within the batch": {
			recs: off.records(t, 0, a.Events()[3], b.Events()[0], b.Events()[2]),
			want: events.SeqGapError{RunID: b.RunID(), Expected: 2, Actual: 3}},
		"new run not starting at 1": {
			recs: off.records(t, 1, b.Events()[1:]...),
			want: events.SeqGapError{RunID: b.RunID(), Expected: 1, Actual: 2}},
	}
	for name, tc := range cases {
		err := f.store.ApplyBatch(ctx, projector, topic, tc.recs)
		var gap *events.SeqGapError
		if !errors.As(err, &gap) || *gap != tc.want {
			t.Fatalf("%s: error = %v, want %+v", name, err, tc.want)
		}
		if after := f.checksumTables(t); !maps.Equal(before, after) {
			t.Fatalf("%s: a failed batch wrote:\nbefore %v\nafter  %v", name, before, after)
		}
	}
}

func TestInvalidRecordFailsTheBatch(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	off := offsets{}
	a, _ := completedRun(t, "acme", "")
	recs := off.records(t, 2, a.Events()...)
	recs[3].Value = []byte(`{"runId":`)
	err := f.store.ApplyBatch(context.Background(), projector, topic, recs)
	var re *postgres.RecordError
	if !errors.As(err, &re) || re.Partition != 2 || re.Offset != recs[3].Offset {
		t.Fatalf("error = %v, want a RecordError at partition 2 offset %d", err, recs[3].Offset)
	}
	if cp, err := f.store.CheckpointsOf(context.Background(), projector, topic); err != nil || len(cp) != 0 {
		t.Fatalf("checkpoints = %v, %v; want none", cp, err)
	}
}

func TestCheckpointsAdvanceAndNeverGoBack(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	off := offsets{}
	first := append(mixedBatch(t, off, 0), mixedBatch(t, off, 5)...)
	second := mixedBatch(t, off, 0)
	f.apply(t, first)
	f.apply(t, second)
	want := map[int32]int64{0: second[len(second)-1].Offset + 1, 5: first[len(first)-1].Offset + 1}
	got, err := f.store.CheckpointsOf(ctx, projector, topic)
	if err != nil || !maps.Equal(got, want) {
		t.Fatalf("checkpoints = %v, %v; want %v", got, err, want)
	}
	f.apply(t, first) // replaying older offsets
	if got, _ = f.store.CheckpointsOf(ctx, projector, topic); !maps.Equal(got, want) {
		t.Fatalf("checkpoints moved back: %v, want %v", got, want)
	}
	if other, _ := f.store.CheckpointsOf(ctx, "another-projector", topic); len(other) != 0 {
		t.Fatalf("another projector has checkpoints %v", other)
	}
}

// Two instances applying the same records at once (a rebalance overlap):
// one applies them, the other finds them applied.
func TestConcurrentInstancesApplyOnce(t *testing.T) {
	t.Parallel()
	f, single := newFixture(t), newFixture(t)
	off := offsets{}
	recs := append(mixedBatch(t, off, 0), mixedBatch(t, off, 0)...)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Go(func() { errs <- f.store.ApplyBatch(context.Background(), projector, topic, recs) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	single.apply(t, recs)
	if a, b := f.checksumViews(t), single.checksumViews(t); !maps.Equal(a, b) {
		t.Fatalf("concurrent apply differs from a single one:\n%v\n%v", a, b)
	}
}

// NUL is valid in user text; Postgres text and jsonb cannot hold it.
func TestNULCharactersAreProjected(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	l := newRun(t, "acme", "session\x00")
	l.Add(events.Draft{Type: events.RunAccepted, CommandID: events.NewID("cmd"), Payload: events.RunAcceptedPayload{
		AgentID: "assistant", Input: events.UserInput{Content: "a\x00b \\u0000"}, IdempotencyKey: "k",
		Metadata: map[string]string{"k": "v\x00"}}})
	l.Cancelled("", "stop\x00")
	recs := offsets{}.records(t, 0, l.Events()...)
	f.apply(t, recs)
	run, err := f.store.GetRun(ctx, "acme", l.RunID())
	if err != nil {
		t.Fatal(err)
	}
	if run.CancelReason != "stop\uFFFD" || run.PlatformSessionID != "session\uFFFD" {
		t.Fatalf("cancel reason %q, session %q", run.CancelReason, run.PlatformSessionID)
	}
	assertJSON(t, run.Input, `{"content":"a\ufffdb \\u0000"}`)
	evs, err := f.store.ListEvents(ctx, "acme", l.RunID(), 0, 0, 0)
	if err != nil || len(evs) != 2 || !bytes.Equal(evs[0].Envelope, recs[0].Value) ||
		!strings.Contains(string(evs[0].Envelope), `a\u0000b`) {
		t.Fatalf("envelopes not kept verbatim: %v %v", evs, err)
	}
}

// Events of types this projector does not know (a newer writer) are kept and
// advance the run's seq without changing its status.
func TestUnknownEventTypesAreKept(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	l := newRun(t, "acme", "")
	l.accept(events.NewID("cmd"), "k")
	future := l.Events()[0]
	future.Seq, future.EventID, future.Type = 2, events.NewID("evt"), "runtime.future.happened"
	f.apply(t, offsets{}.records(t, 0, l.Events()[0], future))
	run, err := f.store.GetRun(context.Background(), "acme", l.RunID())
	if err != nil || run.Status != "queued" || run.LastSeq != 2 {
		t.Fatalf("run = %+v, %v", run, err)
	}
}

// If run_seq and run_events ever disagree, the batch fails loudly instead of
// projecting on a view that cannot be trusted.
func TestInconsistentSeqTableFailsTheBatch(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	off := offsets{}
	recs := mixedBatch(t, off, 0)
	f.apply(t, recs)
	if _, err := f.pool.Exec(context.Background(), "DELETE FROM run_seq"); err != nil {
		t.Fatal(err)
	}
	before := f.checksumTables(t)
	if err := f.store.ApplyBatch(context.Background(), projector, topic, recs); err == nil {
		t.Fatal("ApplyBatch succeeded over an inconsistent run_seq")
	}
	if after := f.checksumTables(t); !maps.Equal(before, after) {
		t.Fatal("the failed batch wrote")
	}
}
