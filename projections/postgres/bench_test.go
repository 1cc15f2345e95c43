package postgres_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/events/eventstest"
	"github.com/xbot-runtime/xbot/projections/postgres"
)

// benchBatch builds n records of partition 0: runs of 20 events (accepted,
// started, an assistant message of 16 deltas, completed) interleaved ten at
// a time, as concurrent runs interleave on a partition.
func benchBatch(tb testing.TB, off offsets, n int) ([]postgres.Record, []events.Envelope) {
	var evs []events.Envelope
	for len(evs) < n {
		var group [][]events.Envelope
		for range 10 {
			l := newRun(tb, "acme", "sess-1")
			l.accept(events.NewID("cmd"), "k")
			l.Started("")
			l.assistantMessage(15)
			l.Completed("an old silent pond")
			group = append(group, l.Events())
		}
		evs = append(evs, eventstest.Interleave(group...)...)
	}
	// Cutting runs mid-log is fine: the next batch starts new runs and a
	// run's missing tail is never applied, so there is no gap.
	evs = evs[:n]
	return off.records(tb, 0, evs...), evs
}

// BenchmarkApplyBatch measures ApplyBatch on new events, in batches of
// 100 and 1000 records (a poll's worth); events/s is the figure to compare
// with BenchmarkCopyFromBaseline.
func BenchmarkApplyBatch(b *testing.B) {
	for _, size := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("batch=%d", size), func(b *testing.B) {
			f := newFixture(b)
			off := offsets{}
			total := 0
			for b.Loop() {
				b.StopTimer()
				recs, _ := benchBatch(b, off, size)
				b.StartTimer()
				if err := f.store.ApplyBatch(context.Background(), projector, topic, recs); err != nil {
					b.Fatal(err)
				}
				total += len(recs)
			}
			b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// BenchmarkCopyFromBaseline copies rows like ApplyBatch's run_events rows
// with pgx CopyFrom into a table without keys or indexes: the floor of what
// inserting the same events can cost.
func BenchmarkCopyFromBaseline(b *testing.B) {
	for _, size := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("batch=%d", size), func(b *testing.B) {
			f := newFixture(b)
			ctx := context.Background()
			if _, err := f.pool.Exec(ctx, `CREATE TABLE bench_copy (run_id text, seq bigint, event_id text,
	type text, tenant_id text, platform_session_id text, item_id text, command_id text, occurred_at bigint,
	emitted_at bigint, envelope json)`); err != nil {
				b.Fatal(err)
			}
			off := offsets{}
			total := 0
			for b.Loop() {
				b.StopTimer()
				recs, evs := benchBatch(b, off, size)
				rows := make([][]any, len(evs))
				for i, e := range evs {
					rows[i] = []any{e.RunID, e.Seq, e.EventID, string(e.Type), e.TenantID, e.PlatformSessionID,
						e.ItemID, e.CommandID, e.OccurredAt, e.EmittedAt, string(recs[i].Value)}
				}
				b.StartTimer()
				n, err := f.pool.CopyFrom(ctx, pgx.Identifier{"bench_copy"}, []string{"run_id", "seq", "event_id",
					"type", "tenant_id", "platform_session_id", "item_id", "command_id", "occurred_at", "emitted_at",
					"envelope"}, pgx.CopyFromRows(rows))
				if err != nil || n != int64(len(rows)) {
					b.Fatal(n, err)
				}
				total += len(rows)
			}
			b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "events/s")
		})
	}
}
