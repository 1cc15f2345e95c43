package clickhouse_test

import (
	"fmt"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/xbot-runtime/xbot/infra/kafka/partition"
	"github.com/xbot-runtime/xbot/projections/clickhouse"
	"github.com/xbot-runtime/xbot/projections/runner"
)

// forge returns a copy of rec as a second writer of its (run, seq) would
// produce it: another event id and payload, another place in the log.
func forge(rec runner.Record, partition int32, offset int64) runner.Record {
	f := rec
	f.Event.EventID = "evt_01JQFORGED" + fmt.Sprintf("%016d", offset)
	f.Event.Payload = []byte(`{"agentId":"forged","input":{"content":"forged"},"sandboxKey":{"tenantId":"acme","workspaceId":"w","agentId":"forged","ownerId":"x"},"idempotencyKey":"forged","actor":{"type":"user","id":"mallory"}}`)
	f.Partition, f.Offset = partition, offset
	return f
}

func (f *fixture) eventIDAt(t *testing.T, run string, seq int) []string {
	t.Helper()
	return f.strs(t, fmt.Sprintf("SELECT event_id FROM audit_events FINAL WHERE run_id = '%s' AND seq = %d", run, seq))
}

// TestASecondWriterOfAStoredSeqDoesNotReplaceIt: a record whose (run, seq) is
// stored with other content is refused, in a later batch or in the same one;
// a re-delivery of the stored record still passes.
func TestASecondWriterOfAStoredSeqDoesNotReplaceIt(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	recs := records(t, 1, acme1(t))
	run := recs[0].Event.RunID
	f.apply(t, recs[:3], 3)
	before := f.checksums(t)
	f.apply(t, []runner.Record{forge(recs[0], 0, 500), recs[0], forge(recs[1], 0, 501)}, 3)
	if got := f.eventIDAt(t, run, 1); len(got) != 1 || got[0] != recs[0].Event.EventID {
		t.Errorf("seq 1 holds event %v after a second writer, want the first, %s", got, recs[0].Event.EventID)
	}
	if after := f.checksums(t); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("checksums changed by a second writer:\nbefore %v\nafter  %v", before, after)
	}
	// A new seq written twice in one batch: the first stands.
	f.apply(t, []runner.Record{recs[3], forge(recs[3], 0, 502)}, 2)
	if got := f.eventIDAt(t, run, 4); len(got) != 1 || got[0] != recs[3].Event.EventID {
		t.Errorf("seq 4 holds event %v, want the first writer's %s", got, recs[3].Event.EventID)
	}
	f.apply(t, recs[4:], len(recs))
	if n := f.count(t, "SELECT count() FROM audit_events FINAL"); n != uint64(len(recs)) {
		t.Errorf("%d events stored, want %d", n, len(recs))
	}
}

// TestAnEventOffItsRunsPartitionIsRefused: with the partition count known,
// (without it, the first writer would win here: the forgery came first),
// an event on a partition that does not own its run is refused even when it
// comes first, so the genuine one is stored.
func TestAnEventOffItsRunsPartitionIsRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const partitions = 4
	f.p = clickhouse.New(f.conn, zaptest.NewLogger(t), clickhouse.WithPartitions(partitions))
	recs := records(t, 1, acme1(t))
	run := recs[0].Event.RunID
	home := partition.For(run, partitions)
	for i := range recs {
		recs[i].Partition = home
	}
	f.apply(t, []runner.Record{forge(recs[0], (home+1)%partitions, 0)}, 1)
	f.apply(t, recs, len(recs))
	if got := f.eventIDAt(t, run, 1); len(got) != 1 || got[0] != recs[0].Event.EventID {
		t.Errorf("seq 1 holds event %v, want the genuine %s", got, recs[0].Event.EventID)
	}
}
