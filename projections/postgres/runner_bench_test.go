package postgres_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/xbot-runtime/xbot/infra/devstack/kafkatest"
	"github.com/xbot-runtime/xbot/projections/postgres"
	"github.com/xbot-runtime/xbot/projections/postgres/postgrestest"
	"github.com/xbot-runtime/xbot/projections/runner"
	"github.com/xbot-runtime/xbot/projections/runner/runnertest"
)

// benchEvents is the workload of one iteration: enough that the group's
// join (reported apart, as startup-ms) is not what the rate measures.
const benchEvents = 30_000

// rawChunk is how many rows one raw CopyFrom sends: past a few thousand a
// larger COPY is no faster per row.
const rawChunk = 4096

// BenchmarkProjectorVsCopyFrom measures, in one run, the Postgres projector
// (runner included: a consumer group reading the events topic, decoding,
// every read model and the checkpoint in one transaction per batch) from
// records on Kafka to committed rows, and the floor of the same events
// written raw: pgx CopyFrom of their run_events rows into a table without
// keys or indexes. pct-of-raw is the first over the second. The same copy
// into a table like run_events, its primary key included, is reported as
// pct-of-keyed-raw: what is left between the two is the server's upkeep of
// the key, not the projector's.
//
//	go test -run '^$' -bench ProjectorVsCopyFrom -benchtime 3x ./projections/postgres/
func BenchmarkProjectorVsCopyFrom(b *testing.B) {
	var proj runnertest.Timing
	var raw, keyed time.Duration
	events := 0
	for range b.N {
		b.StopTimer()
		kc := kafkatest.NewTopics(b, 12)
		recs := runnertest.Produce(b, kc, benchEvents)
		store, pool := postgrestest.New(b, postgres.WithEventsTopic(kc.EventsTopic()))
		b.StartTimer()
		t := runnertest.Project(b, kc, store, len(recs))
		b.StopTimer()
		raw += copyRaw(b, pool, recs, `CREATE TABLE raw_events (run_id text, seq bigint, event_id text,
	type text, tenant_id text, platform_session_id text, item_id text, command_id text, occurred_at bigint,
	emitted_at bigint, envelope json)`)
		keyed += copyRaw(b, pool, recs, `CREATE TABLE raw_events_keyed (LIKE run_events INCLUDING ALL)`)
		proj.Startup += t.Startup
		proj.Apply += t.Apply
		proj.Batches += t.Batches
		events += len(recs)
	}
	projRate, rawRate := float64(events)/proj.Apply.Seconds(), float64(events)/raw.Seconds()
	b.ReportMetric(projRate, "events/s")
	b.ReportMetric(rawRate, "raw-events/s")
	b.ReportMetric(100*projRate/rawRate, "pct-of-raw")
	b.ReportMetric(100*projRate/(float64(events)/keyed.Seconds()), "pct-of-keyed-raw")
	b.ReportMetric(float64(events)/float64(proj.Batches), "events/batch")
	b.ReportMetric(float64(proj.Startup.Milliseconds())/float64(b.N), "startup-ms")
}

// copyRaw creates a table with create, copies recs into it as run_events
// rows with pgx CopyFrom, rawChunk rows at a time, and returns the time the
// copies took.
func copyRaw(b *testing.B, pool *pgxpool.Pool, recs []runner.Record, create string) time.Duration {
	b.Helper()
	ctx := context.Background()
	if _, err := pool.Exec(ctx, create); err != nil {
		b.Fatal(err)
	}
	table := strings.Fields(create)[2]
	rows := make([][]any, len(recs))
	for i, r := range recs {
		e := r.Event
		rows[i] = []any{e.RunID, e.Seq, e.EventID, string(e.Type), e.TenantID, e.PlatformSessionID,
			e.ItemID, e.CommandID, e.OccurredAt, e.EmittedAt, string(r.Value)}
	}
	cols := []string{"run_id", "seq", "event_id", "type", "tenant_id", "platform_session_id", "item_id",
		"command_id", "occurred_at", "emitted_at", "envelope"}
	began := time.Now()
	for len(rows) > 0 {
		chunk := rows[:min(rawChunk, len(rows))]
		rows = rows[len(chunk):]
		n, err := pool.CopyFrom(ctx, pgx.Identifier{table}, cols, pgx.CopyFromRows(chunk))
		if err != nil || n != int64(len(chunk)) {
			b.Fatal(n, err)
		}
	}
	return time.Since(began)
}
