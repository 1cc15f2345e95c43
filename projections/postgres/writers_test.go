package postgres_test

import (
	"context"
	"errors"
	"maps"
	"testing"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/projections/postgres"
)

// TestABatchSplitAmongWritersEqualsOneTransaction applies the same records,
// runs of shared sessions on three partitions, once with every batch split
// among two transactions by partition and once in one transaction per
// batch: the views are equal.
func TestABatchSplitAmongWritersEqualsOneTransaction(t *testing.T) {
	t.Parallel()
	split, whole := newFixture(t), newFixture(t)
	postgres.SetWriters(split.store, 2, 1)
	postgres.SetWriters(whole.store, 1, 1)
	off := offsets{}
	var recs []postgres.Record
	for range 2 {
		for p := range int32(3) {
			recs = append(recs, mixedBatch(t, off, p)...)
		}
	}
	for _, f := range []*fixture{split, whole} {
		for i := 0; i < len(recs); i += 17 {
			f.apply(t, recs[i:min(i+17, len(recs))])
		}
		f.apply(t, recs) // redelivered whole: nothing changes
	}
	if s, w := split.checksumViews(t), whole.checksumViews(t); !maps.Equal(s, w) {
		t.Fatalf("split batches differ from whole ones:\nsplit %v\nwhole %v", s, w)
	}
}

// TestAGapInOnePartitionOfASplitBatch: the batch fails with the gap, the
// transaction of the gap's partition writes nothing while the other
// partition's commits, and the batch retried once the gap is filled applies
// every event once, as a batch never split.
func TestAGapInOnePartitionOfASplitBatch(t *testing.T) {
	t.Parallel()
	f, ref := newFixture(t), newFixture(t)
	postgres.SetWriters(f.store, 2, 1)
	ctx := context.Background()
	off := offsets{}
	a, _ := completedRun(t, "acme", "s-1")
	b, _ := completedRun(t, "acme", "s-1")
	evA, evB := a.Events(), b.Events()
	full := append(off.records(t, 0, evA...), off.records(t, 1, evB...)...)
	hole := len(evA) + 2 // b's seq 3
	gapped := append(append([]postgres.Record(nil), full[:hole]...), full[hole+1:]...)
	err := f.store.ApplyBatch(ctx, projector, topic, gapped)
	var gap *events.SeqGapError
	if !errors.As(err, &gap) || gap.RunID != b.RunID() || gap.Expected != 3 {
		t.Fatalf("error = %v, want the gap of run %s at seq 3", err, b.RunID())
	}
	stored := func(run string) (n int) {
		if err := f.pool.QueryRow(ctx, "SELECT count(*) FROM run_events WHERE run_id = $1", run).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := stored(b.RunID()); n != 0 {
		t.Fatalf("the gap's partition wrote %d events of run %s", n, b.RunID())
	}
	if n := stored(a.RunID()); n != len(evA) {
		t.Fatalf("the other partition wrote %d of run %s's %d events", n, a.RunID(), len(evA))
	}
	f.apply(t, full)
	ref.apply(t, full)
	if got, want := f.checksumViews(t), ref.checksumViews(t); !maps.Equal(got, want) {
		t.Fatalf("retried split batch differs from one applied whole:\ngot  %v\nwant %v", got, want)
	}
}
