package systemtest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/infra/devstack/kafkatest"
	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/stack"
)

// BenchmarkExecutorAlone measures events/s through the executor alone: b.N
// signed creates (one sandbox key each; three no-op tool turns, then a
// streamed answer from a zero-latency scripted model) are produced to the commands
// topic, and a read_committed consumer of the events topic counts events
// until every run has completed; no API, no projector. In the same run, the
// same event records (keys and values) are then written by one raw franz-go
// transactional producer, 50 per transaction, as BenchmarkRawTransactionalProduce
// does: ratio-% is the executor's events/s over that raw produce's.
// cpu-µs/event is the process's CPU (executor, kfake, consumer) per event,
// raw-cpu-µs/event the raw produce's; txns/run is the executor's transactions that wrote events (commit markers
// on the events topic) per run; events/txn their average size; cp-bytes/event what the checkpoints topic took
// per event (the runs' checkpoints and every transaction's meta record), meta-max-bytes its largest meta record.
// The garbage collector runs at the xbot binary's target (asTheBinaryRuns), for
// the executor and the raw produce alike.
func BenchmarkExecutorAlone(b *testing.B) {
	asTheBinaryRuns(b)
	turn := profile.Turn{ToolCalls: []profile.ScriptedCall{{Name: "noop", Arguments: "{}"}}}
	ea := startExecutorAlone(b, profile.Profile{ID: "exec", Model: profile.ModelScripted, Tools: []string{"noop"},
		Script: []profile.Turn{turn, turn, turn, {Text: "a quick scripted answer!", ChunkChars: 8}}})
	ctx, kcfg, prod, cons := context.Background(), ea.kcfg, ea.prod, ea.cons
	creates := signedCreates(b, ea.st, kcfg, b.N)

	b.ResetTimer()
	start, cpu0 := time.Now(), processCPU(b)
	for _, rec := range creates {
		prod.Produce(ctx, rec, func(_ *kgo.Record, err error) {
			if err != nil {
				b.Errorf("produce a create: %v", err)
			}
		})
	}
	out := countEvents(b, cons, b.N)
	elapsed, cpu := time.Since(start), processCPU(b)-cpu0
	b.StopTimer()

	cpu0 = processCPU(b)
	raw := rawTransactionalProduce(b, kcfg, out.recs)
	rawCPU := processCPU(b) - cpu0
	execRate := float64(len(out.recs)) / elapsed.Seconds()
	// CPU per event moves less than wall time on a shared machine.
	b.ReportMetric(float64(cpu.Microseconds())/float64(len(out.recs)), "cpu-µs/event")
	b.ReportMetric(float64(rawCPU.Microseconds())/float64(len(out.recs)), "raw-cpu-µs/event")
	b.ReportMetric(execRate, "events/s")
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "runs/s")
	b.ReportMetric(raw, "raw-events/s")
	b.ReportMetric(100*execRate/raw, "ratio-%")
	b.ReportMetric(float64(out.txns)/float64(b.N), "txns/run")
	b.ReportMetric(float64(len(out.recs))/float64(max(out.txns, 1)), "events/txn")
	cp := checkpointBytes(b, kcfg)
	b.ReportMetric(float64(cp.bytes)/float64(len(out.recs)), "cp-bytes/event")
	b.ReportMetric(float64(cp.metaMax), "meta-max-bytes")
}

// checkpointed is what the checkpoints topic holds: its records' bytes
// (keys and values) and its largest meta record.
type checkpointed struct {
	bytes, metaMax int
}

// checkpointBytes reads the whole checkpoints topic.
func checkpointBytes(b *testing.B, kcfg kafka.Config) checkpointed {
	var cp checkpointed
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := kafka.ReadTopic(ctx, kcfg, kcfg.CheckpointsTopic(), func(r kafka.Record) error {
		cp.bytes += len(r.Key) + len(r.Value)
		if r.Key == "#partition" {
			cp.metaMax = max(cp.metaMax, len(r.Value))
		}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	return cp
}

// signedCreates builds n signed CreateRun records, each on a sandbox key of
// its own so that the runs run concurrently.
func signedCreates(b *testing.B, st *stack.Stack, kcfg kafka.Config, n int) []*kgo.Record {
	recs := make([]*kgo.Record, 0, n)
	for i := range n {
		key := fmt.Sprintf("exec-bench-%d-%d", n, i)
		sk := events.SandboxKey{TenantID: tenant, WorkspaceID: "w", AgentID: "exec", OwnerID: key}
		hdr := commands.Header{RunID: commands.RunIDFor(tenant, key, sk, 12), TenantID: tenant,
			Actor: events.Actor{Type: "user", ID: "u"}, IdempotencyKey: key}
		c, err := commands.New(commands.CreateRun, hdr, commands.CreateRunPayload{AgentID: "exec",
			Input: events.UserInput{Content: "go"}, SandboxKey: sk})
		if err != nil {
			b.Fatal(err)
		}
		raw, err := json.Marshal(c)
		if err != nil {
			b.Fatal(err)
		}
		rec := &kgo.Record{Topic: kcfg.CommandsTopic(), Key: []byte(c.RunID), Value: raw}
		for k, v := range st.CommandKeys().Sign(c.RunID, raw) {
			rec.Headers = append(rec.Headers, kgo.RecordHeader{Key: k, Value: []byte(v)})
		}
		recs = append(recs, rec)
	}
	return recs
}

// consumed is what countEvents saw: the event records and the transactions
// (commit markers) they came in.
type consumed struct {
	recs []*kgo.Record
	txns int
}

// countEvents reads the events topic until runs runs have completed.
func countEvents(b *testing.B, cons *kgo.Client, runs int) consumed {
	var out consumed
	completed := []byte(`"` + events.RunCompleted + `"`)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for done := 0; done < runs; {
		fs := cons.PollFetches(ctx)
		if ctx.Err() != nil {
			b.Fatalf("%d of %d runs completed: %v", done, runs, ctx.Err())
		}
		fs.EachRecord(func(r *kgo.Record) {
			if r.Attrs.IsControl() {
				out.txns++
				return
			}
			out.recs = append(out.recs, r)
			if bytes.Contains(r.Value, completed) {
				done++
			}
		})
	}
	return out
}

// processCPU is the user and system time this process has used: the
// executor's, kfake's and the consumer's, all in this process.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// rawTransactionalProduce writes recs' keys and values to a topic of their
// own with one transactional producer, 50 records per transaction, and
// returns its records/s.
func rawTransactionalProduce(b *testing.B, kcfg kafka.Config, recs []*kgo.Record) float64 {
	prod, err := kafka.NewClient(kcfg, append([]kgo.Opt{kgo.TransactionalID(kcfg.Group("raw-exec-bench")),
		kgo.DefaultProduceTopic(kcfg.TopicPrefix + "raw-exec"), kgo.AllowAutoTopicCreation()}, kafka.WriterTuning(kcfg)...)...)
	if err != nil {
		b.Fatal(err)
	}
	defer prod.Close()
	ctx := context.Background()
	const perTxn = 50
	start := time.Now()
	for i := 0; i < len(recs); {
		if err := prod.BeginTransaction(); err != nil {
			b.Fatal(err)
		}
		for end := min(i+perTxn, len(recs)); i < end; i++ {
			prod.Produce(ctx, &kgo.Record{Key: recs[i].Key, Value: recs[i].Value}, nil)
		}
		if err := prod.Flush(ctx); err != nil {
			b.Fatal(err)
		}
		if err := prod.EndTransaction(ctx, kgo.TryCommit); err != nil {
			b.Fatal(err)
		}
	}
	return float64(len(recs)) / time.Since(start).Seconds()
}

// BenchmarkALongRun is one run of b.N turns through the executor alone, each
// turn a text of 16 deltas and a no-op tool call (about 24 events), the
// model and tool instant: the CPU a turn costs, which should not grow with
// the turns before it. Compare -benchtime 200x with 2000x.
//
//	go test -run '^$' -bench ALongRun -benchtime 2000x ./services/systemtest/
func BenchmarkALongRun(b *testing.B) {
	turn := profile.Turn{Text: strings.Repeat("a word ", 18), ChunkChars: 8,
		ToolCalls: []profile.ScriptedCall{{Name: "noop", Arguments: "{}"}}}
	ea := startExecutorAlone(b, profile.Profile{ID: "exec", Model: profile.ModelScripted, Tools: []string{"noop"},
		Limits: profile.Limits{MaxTurns: b.N + 10, MaxToolCalls: b.N + 10, MaxWallTime: time.Hour},
		Script: append(slices.Repeat([]profile.Turn{turn}, b.N), profile.Turn{Text: "done"})})
	create := signedCreates(b, ea.st, ea.kcfg, 1)[0]
	b.ResetTimer()
	start, cpu0 := time.Now(), processCPU(b)
	if err := ea.prod.ProduceSync(context.Background(), create).FirstErr(); err != nil {
		b.Fatal(err)
	}
	out := countEvents(b, ea.cons, 1)
	elapsed, cpu := time.Since(start), processCPU(b)-cpu0
	b.StopTimer()
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/turn")
	b.ReportMetric(float64(len(out.recs))/float64(b.N), "events/turn")
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "turns/s")
}

// executorAlone is the executor alone on an embedded cluster of 12
// partitions, owning them all, with a producer of commands and a
// read_committed consumer of the events topic that keeps control records.
type executorAlone struct {
	kcfg       kafka.Config
	st         *stack.Stack
	prod, cons *kgo.Client
}

// startExecutorAlone starts an executorAlone whose one agent is p, with
// the no-op tool, as the binary runs (its GC target), until b ends.
func startExecutorAlone(b *testing.B, p profile.Profile) executorAlone {
	asTheBinaryRuns(b)
	ea := executorAlone{kcfg: kafkatest.NewCluster(b, 12).Config().WithDefaults()}
	cat, err := profile.NewCatalog(p)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if ea.st, err = stack.Start(ctx, stack.Options{Kafka: ea.kcfg, Profiles: cat, Logger: zap.NewNop(),
		Components: []stack.Component{stack.Executor}, Tools: noopRegistry(b)}); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ea.st.Stop(ctx) })
	eventually.Holds(b, 30*time.Second, "executor owns every partition", func() bool {
		return len(ea.st.Executor.Partitions()) == 12
	})
	if ea.prod, err = kafka.NewClient(ea.kcfg, kgo.DefaultProduceTopic(ea.kcfg.CommandsTopic())); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(ea.prod.Close)
	if ea.cons, err = kafka.NewClient(ea.kcfg, kgo.ConsumeTopics(ea.kcfg.EventsTopic()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.KeepControlRecords(), kgo.FetchMaxWait(10*time.Millisecond)); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(ea.cons.Close)
	return ea
}
