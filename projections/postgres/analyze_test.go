package postgres_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/xbot-runtime/xbot/projections/postgres"
	"github.com/xbot-runtime/xbot/projections/runner/runnertest"
)

// TestAPlanMadeOnAnEmptyViewIsReplacedOnceItHoldsRuns: a connection that
// prepared the lookup of a run while the view was empty caches a plan made
// for an empty table, which scans the tenant's runs. Once the tables have
// grown, the projector analyzes them after its next thousand events (beside
// the batches that follow), and that plan gives way to one that reads the run by its key.
func TestAPlanMadeOnAnEmptyViewIsReplacedOnceItHoldsRuns(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	conn, err := f.pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	// The plan of every execution is the cached generic one, as it becomes
	// after a prepared statement's fifth execution.
	for _, sql := range []string{"SET plan_cache_mode = force_generic_plan",
		"PREPARE get_run(text, text) AS " + postgres.GetRunSQL,
		"EXECUTE get_run('tenant-1', 'run_none')"} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}

	// Runs written before, by an earlier projector: a table of 20,000 runs
	// that was never analyzed.
	if _, err := f.pool.Exec(ctx, `INSERT INTO runs (run_id, tenant_id, status, input, sandbox_key, last_seq,
	created_at, updated_at)
SELECT 'run_old_' || g, 'tenant-' || (g % 7), 'completed', '{}', '{}', 9, now(), now()
FROM generate_series(1, 20000) g`); err != nil {
		t.Fatal(err)
	}

	recs := fortyRuns(t)
	for len(recs) > 0 { // 1,320 events, 200 a batch
		n := min(200, len(recs))
		f.apply(t, recs[:n])
		recs = recs[n:]
	}
	postgres.WaitAnalyzed(f.store) // the check runs beside the batches

	var analyzed bool
	if err := f.pool.QueryRow(ctx, `SELECT last_analyze IS NOT NULL FROM pg_stat_user_tables
WHERE relname = 'runs'`).Scan(&analyzed); err != nil {
		t.Fatal(err)
	}
	if !analyzed {
		t.Error("the runs table was not analyzed")
	}
	rows, err := conn.Query(ctx, "EXPLAIN EXECUTE get_run('tenant-1', 'run_01JB0000000000000000000001')")
	if err != nil {
		t.Fatal(err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if plan := strings.Join(lines, "\n"); !strings.Contains(plan, "Index Scan using runs_pkey on runs r") {
		t.Fatalf("the lookup of a run does not read it by its key:\n%s", plan)
	}
}

// TestBatchesDoNotWaitForTheAnalysis: the projector's check of the view's
// tables runs beside its batches. While another session holds a lock that
// ANALYZE of runs waits for (one that inserts and updates do not), every
// batch is still applied; the analysis ends once the lock is let go.
func TestBatchesDoNotWaitForTheAnalysis(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	recs := fortyRuns(t)
	holder, err := f.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = holder.Rollback(ctx) }()
	if _, err := holder.Exec(ctx, "LOCK TABLE runs IN SHARE UPDATE EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}

	applied := make(chan error, 1)
	go func() {
		for rest := recs; len(rest) > 0; { // 1,320 events, 200 a batch: the check is due after the fifth
			n := min(200, len(rest))
			if err := f.store.ApplyBatch(ctx, projector, topic, rest[:n]); err != nil {
				applied <- err
				return
			}
			rest = rest[n:]
		}
		applied <- nil
	}()
	select {
	case err := <-applied:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the batches waited for the analysis, which waits for the lock")
	}
	var runs int
	if err := f.pool.QueryRow(ctx, "SELECT count(*) FROM runs").Scan(&runs); err != nil {
		t.Fatal(err)
	}
	if runs != 40 {
		t.Fatalf("runs holds %d rows, want 40", runs)
	}
	if analyzed(t, f, "runs") {
		t.Fatal("runs was analyzed while the lock that ANALYZE waits for was held")
	}

	if err := holder.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	postgres.WaitAnalyzed(f.store)
	if !analyzed(t, f, "runs") {
		t.Error("runs was not analyzed once the lock was let go")
	}
}

// fortyRuns is the records of 40 runnertest runs on partition 0: 1,320
// events.
func fortyRuns(t *testing.T) []postgres.Record {
	t.Helper()
	var recs []postgres.Record
	for n := range 40 {
		for _, e := range runnertest.Run(t, n) {
			raw, err := json.Marshal(e)
			if err != nil {
				t.Fatal(err)
			}
			recs = append(recs, postgres.Record{Partition: 0, Offset: int64(len(recs)), Key: e.RunID, Value: raw})
		}
	}
	return recs
}
