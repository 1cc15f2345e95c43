package clickhouse_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/xbot-runtime/xbot/projections/clickhouse"
	"github.com/xbot-runtime/xbot/projections/runner"
)

// benchRun is a 21-event run as the agent loop writes it: accepted, started,
// three turns that each run a command, a final answer, completed.
func benchRun(b *testing.B, n int) *runLog {
	run := fmt.Sprintf("run_01JB%022d", n)
	l := newRun(b, fmt.Sprintf("tenant-%d", n%7), run, day1+int64(n)*10)
	l.create(fmt.Sprintf("cmd_01JB%022d", n), "key-"+run, alice)
	for turn := range 3 {
		call := shell(fmt.Sprintf("call_%d", turn), "make step-"+fmt.Sprint(turn))
		resp, exec := fmt.Sprintf("itm_%d_m%d", n, turn), fmt.Sprintf("itm_%d_x%d", n, turn)
		l.response(resp, turn, 100, call).startExec(exec, resp, call).finishExec(exec, call, "make", turn%2)
	}
	l.response(fmt.Sprintf("itm_%d_final", n), 3, 100)
	l.Completed("done")
	return l
}

// benchSource hands out batches of records of fresh runs, interleaved 20 at a
// time on one partition, with offsets that keep growing.
type benchSource struct {
	b      *testing.B
	runs   int
	offset int64
	queue  []runner.Record
}

func (s *benchSource) next(n int) []runner.Record {
	for len(s.queue) < n {
		s.b.StopTimer()
		logs := make([]*runLog, 20)
		for i := range logs {
			logs[i] = benchRun(s.b, s.runs)
			s.runs++
		}
		for _, r := range records(s.b, 1, logs...) {
			r.Offset += s.offset
			s.queue = append(s.queue, r)
		}
		s.offset = s.queue[len(s.queue)-1].Offset + 2
		s.b.StartTimer()
	}
	batch := s.queue[:n:n]
	s.queue = s.queue[n:]
	return batch
}

var benchBatches = []int{10, 100, 1000}

// BenchmarkApply measures the projector: decode payloads, check seqs,
// insert audit_commands and audit_events (whose materialized views write the
// run seqs and checkpoints).
func BenchmarkApply(b *testing.B) {
	for _, n := range benchBatches {
		b.Run(fmt.Sprintf("batch=%d", n), func(b *testing.B) {
			f := newFixture(b)
			src := &benchSource{b: b}
			ctx := context.Background()
			b.ResetTimer()
			for range b.N {
				if err := f.p.Apply(ctx, src.next(n)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// BenchmarkRawInsert is the baseline: the same audit_events rows, already
// mapped, inserted with clickhouse-go's PrepareBatch/Append/Send into a copy
// of audit_events without materialized views; no decoding, no seq check, no
// audit_commands.
func BenchmarkRawInsert(b *testing.B) {
	for _, n := range benchBatches {
		b.Run(fmt.Sprintf("batch=%d", n), func(b *testing.B) {
			f := newFixture(b)
			ctx := context.Background()
			if err := f.conn.Exec(ctx, "CREATE TABLE raw_events AS audit_events"); err != nil {
				b.Fatal(err)
			}
			src := &benchSource{b: b}
			b.ResetTimer()
			for range b.N {
				recs := src.next(n)
				b.StopTimer()
				rows := make([][]any, len(recs))
				for i, r := range recs {
					var err error
					if rows[i], err = clickhouse.EventRowValues(r); err != nil {
						b.Fatal(err)
					}
				}
				b.StartTimer()
				rawInsert(b, f, rows)
			}
			b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

func rawInsert(b *testing.B, f *fixture, rows [][]any) {
	batch, err := f.conn.PrepareBatch(context.Background(), "INSERT INTO raw_events")
	if err != nil {
		b.Fatal(err)
	}
	for _, row := range rows {
		if err := batch.Append(row...); err != nil {
			b.Fatal(err)
		}
	}
	if err := batch.Send(); err != nil {
		b.Fatal(err)
	}
}
