package runner_test

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/devstack/chtest"
	"github.com/xbot-runtime/xbot/infra/devstack/kafkatest"
	"github.com/xbot-runtime/xbot/infra/devstack/pgtest"
	"github.com/xbot-runtime/xbot/infra/kafka"
	pginfra "github.com/xbot-runtime/xbot/infra/postgres"
	"github.com/xbot-runtime/xbot/projections/postgres"
	"github.com/xbot-runtime/xbot/projections/runner"
	"github.com/xbot-runtime/xbot/services/stack"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Run(chtest.Wrap(kafkatest.Wrap(m)))) }

// writeRuns writes n events as runs of 11 (accepted, started, an assistant
// message of 6 deltas, completed) to the events topic of a 12-partition
// cluster, and returns its config.
func writeRuns(b *testing.B, n int) kafka.Config {
	b.Helper()
	kc := kafkatest.NewConfig(b, 12)
	prod, err := kafka.NewProducer(kc)
	if err != nil {
		b.Fatal(err)
	}
	defer prod.Close()
	now := time.Now().UnixMilli()
	for written := 0; written < n; {
		runID := events.NewID("run")
		item := events.NewID("itm")
		drafts := []events.Draft{
			{Type: events.RunAccepted, CommandID: events.NewID("cmd"), Payload: events.RunAcceptedPayload{AgentID: "a",
				Input: events.UserInput{Content: "hello"}, IdempotencyKey: runID, Actor: events.Actor{Type: "user", ID: "u"}}},
			{Type: events.RunStarted},
			{Type: events.ItemStarted, ItemID: item, Payload: events.ItemStartedPayload{ItemType: events.ItemAssistantMessage}},
		}
		for range 6 {
			drafts = append(drafts, events.Draft{Type: events.ItemDelta, ItemID: item, Payload: events.ItemDeltaPayload{Delta: "a few words "}})
		}
		drafts = append(drafts,
			events.Draft{Type: events.ItemCompleted, ItemID: item, Payload: events.ItemCompletedPayload{ItemType: events.ItemAssistantMessage,
				Status: events.ItemStatusCompleted, Content: "a few words a few words a few words"}},
			events.Draft{Type: events.RunCompleted, Payload: events.RunCompletedPayload{Output: "done"}})
		id := events.Identity{RunID: runID, TenantID: "acme", PlatformSessionID: "s-" + runID[len(runID)-4:]}
		for i, d := range drafts {
			env, err := d.Seal(id, int64(i+1), events.NewID("evt"), now)
			if err != nil {
				b.Fatal(err)
			}
			raw, _ := json.Marshal(env)
			if err := prod.Produce(context.Background(), kc.EventsTopic(), runID, raw); err != nil {
				b.Fatal(err)
			}
		}
		written += len(drafts)
	}
	return kc
}

// benchRebuild times a rebuild from the beginning: the projector runner on
// its consumer group (polled batches, ordering per run).
func benchRebuild(b *testing.B, kc kafka.Config, p runner.Projector) {
	b.Helper()
	var last runner.Progress
	b.ResetTimer()
	err := runner.Rebuild(context.Background(), runner.Config{Kafka: kc, Projector: p, Logger: zap.NewNop()}, true,
		func(pr runner.Progress) { last = pr })
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(last.Done)/last.Elapsed.Seconds(), "events/s")
}

// BenchmarkRunnerPostgres: the Postgres read models fed by the runner.
// Compare with projections/postgres BenchmarkCopyFromBaseline.
func BenchmarkRunnerPostgres(b *testing.B) {
	kc := writeRuns(b, b.N)
	ctx := context.Background()
	pool, err := pginfra.Connect(ctx, pgtest.NewDatabase(b))
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Close()
	if err := pginfra.Migrate(ctx, pool, "projection_postgres", postgres.Migrations); err != nil {
		b.Fatal(err)
	}
	benchRebuild(b, kc, postgres.New(pool, zap.NewNop(), postgres.WithEventsTopic(kc.EventsTopic())))
}

// BenchmarkRunnerClickHouse: the audit view fed by the runner. Compare with
// projections/clickhouse BenchmarkRawInsert.
func BenchmarkRunnerClickHouse(b *testing.B) {
	kc := writeRuns(b, b.N)
	conn, p, err := stack.OpenClickHouse(context.Background(), chtest.NewDatabase(b), zap.NewNop())
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	benchRebuild(b, kc, p)
}
