package systemtest_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/infra/devstack/kafkatest"
	"github.com/xbot-runtime/xbot/infra/devstack/pgtest"
	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/services/api/client"
	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/engine/tools"
	"github.com/xbot-runtime/xbot/services/stack"
)

// benchClients is the number of concurrent HTTP clients creating runs.
const benchClients = 32

// BenchmarkEndToEnd creates b.N runs through the HTTP API and measures until
// every one is completed in the Postgres read model: runs/s and events/s of
// the whole path API → Kafka → executor → Kafka → projector → Postgres, with
// the scripted engine (one 3-delta turn, no delay).
func BenchmarkEndToEnd(b *testing.B) {
	asTheBinaryRuns(b)
	fast := profile.Profile{ID: "fast", Model: profile.ModelScripted,
		Script: []profile.Turn{{Text: "a quick scripted answer!", ChunkChars: 8}}}
	elapsed, evs := measureRuns(b, benchStack(b, nil, fast))
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "runs/s")
	b.ReportMetric(float64(evs)/elapsed.Seconds(), "events/s")
}

// benchStack starts, on a cluster of its own, a healthy stack whose catalog
// holds agent (with the tools of reg; nil: the built-in ones); it stops when
// b ends.
func benchStack(b *testing.B, reg *tools.Registry, agent profile.Profile) *stack.Stack {
	cl := kafkatest.NewCluster(b, 12)
	cat, err := profile.NewCatalog(agent)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	st, err := stack.Start(ctx, stack.Options{Kafka: cl.Config(), PGDSN: pgtest.NewDatabase(b),
		APIAddr: "127.0.0.1:0", Tokens: map[string]string{token: actingTenant}, Profiles: cat, Logger: zap.NewNop(),
		WaitDefault: time.Second, WaitMax: time.Second, Tools: reg})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Stop(ctx) })
	eventually.Holds(b, 30*time.Second, "stack healthy", func() bool {
		return st.Healthy(ctx) == nil && len(st.Executor.Partitions()) > 0
	})
	return st
}

// measureRuns creates b.N runs of agent "fast" through the API and waits
// until every one is completed in the Postgres read model; it returns the
// time that took and the events the runs wrote.
func measureRuns(b *testing.B, st *stack.Stack) (time.Duration, int64) {
	b.ResetTimer()
	start := time.Now()
	createMany(b, st, b.N)
	waitCompleted(b, st, b.N)
	elapsed := time.Since(start)
	b.StopTimer()
	var evs int64
	if err := st.Pool.QueryRow(context.Background(), `SELECT count(*) FROM run_events`).Scan(&evs); err != nil {
		b.Fatal(err)
	}
	return elapsed, evs
}

func createMany(b *testing.B, st *stack.Stack, n int) {
	var wg sync.WaitGroup
	next := make(chan int)
	api := apiOf(b, st)
	for range benchClients {
		wg.Go(func() {
			for i := range next {
				// A sandbox key per run: runs of one key run one at a time.
				_, err := api.CreateRun(context.Background(), client.CreateRunRequest{AgentID: "fast", Input: client.UserInput{Content: "go"},
					SandboxKey: &client.SandboxKeyRequest{OwnerID: fmt.Sprintf("bench-%d", i)}},
					client.CommandOptions{IdempotencyKey: fmt.Sprintf("bench-%d-%d", b.N, i), Wait: client.WaitFor(0)})
				if err != nil {
					b.Errorf("create: %v", err)
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

func waitCompleted(b *testing.B, st *stack.Stack, n int) {
	eventually.Succeeds(b, 5*time.Minute, fmt.Sprintf("%d runs completed", n), func() error {
		var done int
		if err := st.Pool.QueryRow(context.Background(), `SELECT count(*) FROM runs WHERE status = 'completed'`).Scan(&done); err != nil {
			b.Fatal(err)
		}
		if done >= n {
			return nil
		}
		return fmt.Errorf("%d completed", done)
	})
}

// BenchmarkRawTransactionalProduce is the baseline: one franz-go
// transactional producer writing 300-byte records to the same kind of
// cluster, 50 records per transaction, no consumer and no database.
func BenchmarkRawTransactionalProduce(b *testing.B) {
	kc := kafkatest.NewCluster(b, 12).Config()
	prod, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(kc.Brokers...), kgo.TransactionalID(kc.Group("bench")),
		kgo.DefaultProduceTopic(kc.TopicPrefix + "raw"), kgo.AllowAutoTopicCreation()}, kafka.WriterTuning(kc)...)...)
	if err != nil {
		b.Fatal(err)
	}
	defer prod.Close()
	ctx := context.Background()
	value := make([]byte, 300)
	const perTxn = 50
	b.ResetTimer()
	start := time.Now()
	for done := 0; done < b.N; {
		if err := prod.BeginTransaction(); err != nil {
			b.Fatal(err)
		}
		for i := 0; i < perTxn && done < b.N; i++ {
			prod.Produce(ctx, &kgo.Record{Key: []byte(fmt.Sprint(done % 1000)), Value: value}, nil)
			done++
		}
		if err := prod.Flush(ctx); err != nil {
			b.Fatal(err)
		}
		if err := prod.EndTransaction(ctx, kgo.TryCommit); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "events/s")
}

// BenchmarkRawTransactionLatency is one transaction per iteration, as an
// engine append is: one 300-byte record produced and committed by a raw
// franz-go transactional producer. It reports the percentiles of the whole
// transaction and of its EndTxn alone, the floor under every append's wait.
func BenchmarkRawTransactionLatency(b *testing.B) {
	kc := kafkatest.NewConfig(b, 12)
	prod, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(kc.Brokers...), kgo.TransactionalID(kc.Group("bench-latency")),
		kgo.DefaultProduceTopic(kc.EventsTopic()), kgo.ProducerLinger(0)}, kafka.WriterTuning(kc)...)...)
	if err != nil {
		b.Fatal(err)
	}
	defer prod.Close()
	ctx := context.Background()
	value := make([]byte, 300)
	txns, ends := make([]time.Duration, 0, b.N), make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		if err := prod.BeginTransaction(); err != nil {
			b.Fatal(err)
		}
		if err := prod.ProduceSync(ctx, &kgo.Record{Key: []byte(fmt.Sprint(i % 1000)), Value: value}).FirstErr(); err != nil {
			b.Fatal(err)
		}
		end := time.Now()
		if err := prod.EndTransaction(ctx, kgo.TryCommit); err != nil {
			b.Fatal(err)
		}
		ends = append(ends, time.Since(end))
		txns = append(txns, time.Since(start))
	}
	b.StopTimer()
	for name, ds := range map[string][]time.Duration{"txn": txns, "endtxn": ends} {
		slices.Sort(ds)
		b.ReportMetric(float64(ds[len(ds)/2].Microseconds())/1000, name+"-p50-ms")
		b.ReportMetric(float64(ds[len(ds)*99/100].Microseconds())/1000, name+"-p99-ms")
	}
}
