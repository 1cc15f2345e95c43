package postgres_test

import (
	"context"
	"encoding/json"
	"maps"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap/zaptest"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/projections/postgres"
	"github.com/xbot-runtime/xbot/projections/runner"
)

// projectorLogs are two partitions' worth of every kind of event.
func projectorLogs(tb testing.TB, off offsets) []postgres.Record {
	a, b := newRichRun(tb, "acme", "s-1"), newRichRun(tb, "acme", "s-1")
	return append(append(mixedBatch(tb, off, 0), off.records(tb, 0, a.Events()...)...), off.records(tb, 2, b.Events()...)...)
}

func (f *fixture) checksums(tb testing.TB) map[string]string {
	tb.Helper()
	sums, err := f.store.Checksums(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	return sums
}

func TestStoreIsTheRunnersProjector(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	var p runner.Projector = f.store
	if p.Name() != "postgres" {
		t.Fatalf("Name() = %q", p.Name())
	}
	recs := projectorLogs(t, offsets{})
	batch := runnerRecords(t, recs)
	for i := 0; i < len(batch); i += 50 {
		if err := p.Apply(ctx, batch[i:min(i+50, len(batch))]); err != nil {
			t.Fatal(err)
		}
	}
	want := map[int32]int64{}
	for _, r := range recs {
		want[r.Partition] = r.Offset + 1
	}
	if cp, err := p.Checkpoints(ctx); err != nil || !maps.Equal(cp, want) {
		t.Fatalf("Checkpoints() = %v, %v; want %v", cp, err, want)
	}
	if other, _ := f.store.CheckpointsOf(ctx, "postgres", "prefixed.xbot.events.v1"); len(other) != 0 {
		t.Fatalf("checkpoints on another topic: %v", other)
	}
	live := f.checksums(t)
	// Idempotent: the same batch again, and a redelivered tail, change nothing.
	if err := p.Apply(ctx, batch); err != nil {
		t.Fatal(err)
	}
	if err := p.Apply(ctx, batch[len(batch)/2:]); err != nil {
		t.Fatal(err)
	}
	if again := f.checksums(t); !maps.Equal(live, again) {
		t.Fatalf("re-applying changed the view:\n%v\n%v", live, again)
	}
	// Rebuilt in one batch elsewhere: equal, checkpoints included.
	rebuilt := newFixture(t)
	if err := rebuilt.store.Apply(ctx, batch); err != nil {
		t.Fatal(err)
	}
	if r := rebuilt.checksums(t); !maps.Equal(live, r) {
		t.Fatalf("rebuilt view differs:\nlive    %v\nrebuilt %v", live, r)
	}
	for table, sum := range live {
		if strings.HasPrefix(sum, "0:") {
			t.Errorf("read model %s is empty", table)
		}
	}
}

func TestWithEventsTopicKeepsPositionsOfThatTopic(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	s := postgres.New(f.pool, zaptest.NewLogger(t), postgres.WithEventsTopic("dev.xbot.events.v1"))
	t.Cleanup(s.Close)
	l, _ := completedRun(t, "acme", "")
	if err := s.Apply(ctx, runnerRecords(t, offsets{}.records(t, 4, l.Events()...))); err != nil {
		t.Fatal(err)
	}
	if cp, _ := s.Checkpoints(ctx); cp[4] != int64(len(l.Events())) {
		t.Fatalf("checkpoints %v", cp)
	}
	if cp, _ := f.store.Checkpoints(ctx); len(cp) != 0 {
		t.Fatalf("checkpoints on the default topic: %v", cp)
	}
}

// Records that can never be applied are poison: the batch writes nothing
// and names the record; the runner dead-letters it instead of retrying.
func TestApplyReportsPoison(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	off := offsets{}
	base, _ := completedRun(t, "acme", "")
	if err := f.store.Apply(ctx, runnerRecords(t, off.records(t, 0, base.Events()[:3]...))); err != nil {
		t.Fatal(err)
	}
	before, beforeCP := f.checksums(t), checkpoints(t, f)

	tool := started(t, "acme", "")
	tool.startTool(events.ItemCommandExecution, "shell", `{}`)
	badData := tool.Events()[2]
	badData.Payload = json.RawMessage(`{"itemType":"command_execution","data":{"toolName":7}}`)
	badPayload := base.Events()[3] // seq 4, a delta: made an item failure whose payload does not decode
	badPayload.Type, badPayload.Payload = events.ItemFailed, json.RawMessage(`{"itemType":["not","a","type"]}`)
	other, _ := completedRun(t, "acme", "")
	cases := map[string]struct {
		recs   []postgres.Record
		bad    int // index of the poison record
		reason string
	}{
		"seq gap":            {off.records(t, 0, append(other.Events()[:2], base.Events()[4:]...)...), 2, "expected seq 4, got 5"},
		"malformed payload":  {off.records(t, 0, badPayload), 0, "runtime.item.failed payload"},
		"malformed itemData": {off.records(t, 1, tool.Events()[0], tool.Events()[1], badData), 2, "cannot unmarshal"},
		"not an envelope":    {append(off.records(t, 1, other.Events()[:1]...), rawRecord(off, 1, `{"runId":`)), 1, "decode event envelope"},
		"new run at seq 2":   {off.records(t, 3, other.Events()[1:]...), 0, "expected seq 1, got 2"},
	}
	for name, tc := range cases {
		batch := runnerRecords(t, tc.recs)
		err := f.store.Apply(ctx, batch)
		pe, ok := runner.IsPoison(err)
		bad := tc.recs[tc.bad]
		if !ok || pe.Partition != bad.Partition || pe.Offset != bad.Offset || !strings.Contains(pe.Reason, tc.reason) {
			t.Fatalf("%s: error = %v, want poison at %d/%d with %q", name, err, bad.Partition, bad.Offset, tc.reason)
		}
		if pe.RunID != batch[tc.bad].Event.RunID || pe.Seq != batch[tc.bad].Event.Seq {
			t.Fatalf("%s: poison names run %s seq %d", name, pe.RunID, pe.Seq)
		}
		if after := f.checksums(t); !maps.Equal(before, after) || !maps.Equal(beforeCP, checkpoints(t, f)) {
			t.Fatalf("%s: a poisoned batch wrote", name)
		}
	}
	// A database failure is not poison: it is retried.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := f.store.Apply(cctx, runnerRecords(t, off.records(t, 0, base.Events()[3:]...))); err == nil {
		t.Fatal("Apply with a cancelled context succeeded")
	} else if _, ok := runner.IsPoison(err); ok {
		t.Fatalf("a cancelled context is poison: %v", err)
	}
}

func rawRecord(off offsets, partition int32, value string) postgres.Record {
	r := postgres.Record{Partition: partition, Offset: off[partition], Value: []byte(value)}
	off[partition] += 2
	return r
}

func checkpoints(tb testing.TB, f *fixture) map[int32]int64 {
	tb.Helper()
	cp, err := f.store.Checkpoints(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	return cp
}

func TestResetEmptiesTheViewForARebuild(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	batch := runnerRecords(t, projectorLogs(t, offsets{}))
	if err := f.store.Apply(ctx, batch); err != nil {
		t.Fatal(err)
	}
	live := f.checksums(t)
	if err := f.store.Heartbeat(ctx, "postgres", "i-1"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.pool.Exec(ctx, `INSERT INTO projector_checkpoints (projector, topic, partition, next_offset)
VALUES ('clickhouse', 'xbot.events.v1', 0, 42)`); err != nil {
		t.Fatal(err)
	}
	var migrations int
	if err := f.pool.QueryRow(ctx, "SELECT count(*) FROM schema_migrations").Scan(&migrations); err != nil {
		t.Fatal(err)
	}
	if err := f.store.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	for table, sum := range f.checksums(t) {
		if sum != "0:" {
			t.Errorf("after Reset, %s = %s", table, sum)
		}
	}
	var kept, beats, after int
	err := f.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM projector_checkpoints WHERE projector = 'clickhouse'),
	(SELECT count(*) FROM projector_heartbeats), (SELECT count(*) FROM schema_migrations)`).Scan(&kept, &beats, &after)
	if err != nil || kept != 1 || beats != 1 || after != migrations {
		t.Fatalf("Reset removed other state: checkpoints %d, heartbeats %d, migrations %d (was %d), %v",
			kept, beats, after, migrations, err)
	}
	// The rebuild from offset zero equals the live view.
	for i := 0; i < len(batch); i += 7 {
		if err := f.store.Apply(ctx, batch[i:min(i+7, len(batch))]); err != nil {
			t.Fatal(err)
		}
	}
	if rebuilt := f.checksums(t); !maps.Equal(live, rebuilt) {
		t.Fatalf("rebuilt view differs:\nlive    %v\nrebuilt %v", live, rebuilt)
	}
}

// Checksums cover every read model, change with any derived value, and do
// not depend on the session's time zone.
func TestChecksums(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	if err := f.store.Apply(ctx, runnerRecords(t, projectorLogs(t, offsets{}))); err != nil {
		t.Fatal(err)
	}
	sums := f.checksums(t)
	want := []string{"runs", "run_events", "run_seq", "commands", "items", "approvals", "sessions",
		"permission_grants", "projector_checkpoints"}
	if len(sums) != len(want) {
		t.Fatalf("checksums of %v, want %v", sums, want)
	}
	other := f.storeWith(t, func(cfg *pgxpool.Config) {
		cfg.ConnConfig.RuntimeParams["timezone"] = "Asia/Kathmandu"
		cfg.ConnConfig.RuntimeParams["datestyle"] = "SQL, DMY"
	})
	if got, err := other.Checksums(ctx); err != nil || !maps.Equal(got, sums) {
		t.Fatalf("checksums in another time zone:\n%v\n%v (%v)", got, sums, err)
	}
	for _, change := range []struct{ table, sql string }{
		{"items", "UPDATE items SET duration_ms = duration_ms + 1 WHERE duration_ms IS NOT NULL"},
		{"sessions", "UPDATE sessions SET last_activity_at = last_activity_at + interval '1 ms'"},
		{"approvals", "UPDATE approvals SET reason = reason || '.'"},
		{"permission_grants", "DELETE FROM permission_grants"},
		{"projector_checkpoints", "UPDATE projector_checkpoints SET next_offset = next_offset + 1"},
	} {
		if _, err := f.pool.Exec(ctx, change.sql); err != nil {
			t.Fatal(err)
		}
		now := f.checksums(t)
		if now[change.table] == sums[change.table] {
			t.Fatalf("%s: checksum did not change", change.sql)
		}
		sums = now
	}
	// The projection's clock is not part of the view.
	if _, err := f.pool.Exec(ctx, "UPDATE projector_checkpoints SET updated_at = now() - interval '1 day'"); err != nil {
		t.Fatal(err)
	}
	if err := f.store.Heartbeat(ctx, "postgres", "i-2"); err != nil {
		t.Fatal(err)
	}
	if now := f.checksums(t); !maps.Equal(now, sums) {
		t.Fatalf("clock columns changed the checksums:\n%v\n%v", now, sums)
	}
}
