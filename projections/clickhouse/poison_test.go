package clickhouse_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/projections/clickhouse"
	"github.com/xbot-runtime/xbot/projections/runner"
)

// applyErr applies one batch and returns its error.
func (f *fixture) applyErr(recs []runner.Record) error {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	return f.p.Apply(ctx, recs)
}

// wantPoison checks that err is a PoisonError for run at seq.
func wantPoison(t *testing.T, err error, run string, seq int64, reason string) {
	t.Helper()
	pe, ok := runner.IsPoison(err)
	if !ok {
		t.Fatalf("err = %v, want a PoisonError", err)
	}
	if pe.RunID != run || pe.Seq != seq || !strings.Contains(pe.Reason, reason) {
		t.Errorf("poison %+v, want run %s seq %d, reason with %q", pe, run, seq, reason)
	}
}

func TestSeqGapIsPoison(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	recs := records(t, 1, acme1(t))
	f.apply(t, recs[:3], 3)
	run := wid("run", "ACME1")
	// Within a batch, after a re-delivered record.
	wantPoison(t, f.applyErr([]runner.Record{recs[2], recs[3], recs[5]}), run, 6, "seq gap")
	if n := f.count(t, "SELECT count() FROM audit_events"); n != 3 {
		t.Errorf("%d rows after a poison batch, want the 3 of before (nothing of the batch)", n)
	}
	// Across batches, seen by a projector that has not cached the run (a
	// restart): it reads the last seq from the database.
	fresh := clickhouse.New(f.conn, zaptest.NewLogger(t))
	err := fresh.Apply(context.Background(), recs[4:6])
	wantPoison(t, err, run, 5, "has seq 3 stored, got seq 5")
	// Seqs already stored pass as re-deliveries, and the run goes on.
	if err := fresh.Apply(context.Background(), recs[1:6]); err != nil {
		t.Fatal(err)
	}
}

// Another instance wrote the run's next seqs: the cache is stale, the
// database is not.
func TestSeqCheckRereadsAStaleCache(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	recs := records(t, 1, acme1(t))
	f.apply(t, recs[:2], 2)
	other := clickhouse.New(f.conn, zaptest.NewLogger(t))
	if err := other.Apply(context.Background(), recs[:6]); err != nil {
		t.Fatal(err)
	}
	if err := f.applyErr(recs[6:8]); err != nil {
		t.Fatalf("apply after another instance advanced the run: %v", err)
	}
}

func TestUndecodableRecordsArePoison(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	recs := records(t, 1, acme1(t))
	run := wid("run", "ACME1")

	badPayload := append([]runner.Record(nil), recs[:4]...) // seq 4 is the first item.started
	badPayload[3].Event.Payload = json.RawMessage(`{"itemType": 7}`)
	wantPoison(t, f.applyErr(badPayload), run, 4, "")

	badTime := append([]runner.Record(nil), recs[:1]...)
	badTime[0].Event.OccurredAt = -1
	wantPoison(t, f.applyErr(badTime), run, 1, "outside 1970-2106")

	notEnvelope := []runner.Record{{Record: kafka.Record{Partition: 0, Offset: 99, Value: []byte("{not json")}}}
	if _, ok := runner.IsPoison(f.applyErr(notEnvelope)); !ok {
		t.Error("a record that is not an envelope is not poison")
	}
	if n := f.count(t, "SELECT count() FROM audit_events"); n != 0 {
		t.Errorf("%d rows written by poison batches", n)
	}
}

// A type from a newer writer is kept with the envelope's columns.
func TestUnknownTypeIsRecorded(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	recs := records(t, 1, acme1(t))
	future := recs[0]
	future.Event.Type = events.Type("runtime.future.thing")
	future.Event.Payload = json.RawMessage(`{"anything":true}`)
	if err := f.applyErr([]runner.Record{future}); err != nil {
		t.Fatal(err)
	}
	got := f.strs(t, "SELECT concat(type, ' ', payload, ' ', actor_id) FROM audit_events FINAL")
	if len(got) != 1 || got[0] != `runtime.future.thing {"anything":true} ` {
		t.Errorf("rows %q", got)
	}
	if n := f.count(t, "SELECT count() FROM audit_commands"); n != 0 {
		t.Errorf("an unknown type wrote %d audit_commands rows", n)
	}
}
