package runner_test

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"testing"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/events/eventstest"
	"github.com/xbot-runtime/xbot/infra/devstack/chtest"
	"github.com/xbot-runtime/xbot/infra/devstack/kafkatest"
	"github.com/xbot-runtime/xbot/infra/devstack/pgtest"
	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/projections/postgres"
	"github.com/xbot-runtime/xbot/projections/postgres/postgrestest"
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
	for written := 0; written < n; {
		runID := events.NewID("run")
		item := events.NewID("itm")
		l := eventstest.New(b, events.Identity{RunID: runID, TenantID: "acme", PlatformSessionID: "s-" + runID[len(runID)-4:]}).
			Accepted(events.NewID("cmd"), events.RunAcceptedPayload{AgentID: "a",
				Input: events.UserInput{Content: "hello"}, IdempotencyKey: runID, Actor: events.Actor{Type: "user", ID: "u"}}).
			Started("").
			ItemStarted(item, events.ItemAssistantMessage, nil).
			Deltas(item, slices.Repeat([]string{"a few words "}, 6)...).
			ItemCompleted(item, events.ItemAssistantMessage, events.ItemStatusCompleted, "a few words a few words a few words", nil).
			Completed("done")
		for _, env := range l.Events() {
			raw, _ := json.Marshal(env)
			if err := prod.Produce(context.Background(), kc.EventsTopic(), runID, raw); err != nil {
				b.Fatal(err)
			}
			written++
		}
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
	store, _ := postgrestest.New(b, postgres.WithEventsTopic(kc.EventsTopic()))
	benchRebuild(b, kc, store)
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
