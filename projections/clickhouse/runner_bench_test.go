package clickhouse_test

import (
	"context"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/infra/devstack/kafkatest"
	"github.com/xbot-runtime/xbot/projections/clickhouse"
	"github.com/xbot-runtime/xbot/projections/runner/runnertest"
)

// runnerBenchEvents is the workload of one iteration: enough that the
// group's join (reported apart, as startup-ms) is not what the rate measures.
const runnerBenchEvents = 30_000

// rawChunk is how many rows one raw batch insert sends.
const rawChunk = 4096

// BenchmarkProjectorVsBatchInsert measures, in one run, the ClickHouse
// projector (runner included: a consumer group reading the events topic,
// decoding, the seq check, the first-writer check, one insert per batch)
// from records on Kafka to inserted rows, and the floor of the same
// audit_events rows inserted raw with clickhouse-go's
// PrepareBatch/Append/Send into a copy of audit_events without materialized
// views. pct-of-raw is the first over the second.
//
//	go test -run '^$' -bench ProjectorVsBatchInsert -benchtime 3x ./projections/clickhouse/
func BenchmarkProjectorVsBatchInsert(b *testing.B) {
	var proj runnertest.Timing
	var raw time.Duration
	events := 0
	for range b.N {
		b.StopTimer()
		kc := kafkatest.NewTopics(b, 12)
		recs := runnertest.Produce(b, kc, runnerBenchEvents)
		f := newFixture(b)
		if err := f.conn.Exec(context.Background(), "CREATE TABLE raw_events AS audit_events"); err != nil {
			b.Fatal(err)
		}
		rows := make([][]any, len(recs))
		for i, r := range recs {
			var err error
			if rows[i], err = clickhouse.EventRowValues(r); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		t := runnertest.Project(b, kc, f.p, len(recs))
		b.StopTimer()
		began := time.Now()
		for i := 0; i < len(rows); i += rawChunk {
			rawInsert(b, f, rows[i:min(i+rawChunk, len(rows))])
		}
		raw += time.Since(began)
		proj.Startup += t.Startup
		proj.Apply += t.Apply
		proj.Batches += t.Batches
		events += len(recs)
	}
	projRate, rawRate := float64(events)/proj.Apply.Seconds(), float64(events)/raw.Seconds()
	b.ReportMetric(projRate, "events/s")
	b.ReportMetric(rawRate, "raw-events/s")
	b.ReportMetric(100*projRate/rawRate, "pct-of-raw")
	b.ReportMetric(float64(events)/float64(proj.Batches), "events/batch")
	b.ReportMetric(float64(proj.Startup.Milliseconds())/float64(b.N), "startup-ms")
}
