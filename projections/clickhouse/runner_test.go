package clickhouse_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/events/eventstest"
	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/infra/devstack/kafkatest"
	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/projections/runner"
)

// TestRunnerLiveThenRebuild runs the projector under the real runner on an
// embedded Kafka: the live view, then runner.Rebuild from the beginning,
// must have the same checksums, and the checkpoints must reach the end of
// every partition.
func TestRunnerLiveThenRebuild(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	kc := eventsCluster(t)
	logs := workload(t)
	produce(t, kc, logs)
	total, _ := eventCount(logs)
	cfg := runner.Config{Kafka: kc, Projector: f.p, Logger: zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel)),
		RetryInitial: 5 * time.Millisecond, RetryMax: 50 * time.Millisecond}

	_, end, err := kafka.EndOffsets(context.Background(), kc, kc.EventsTopic())
	if err != nil {
		t.Fatal(err)
	}
	// The events table's rows are visible before its materialized views
	// (commands, checkpoints) finished the same insert: wait for the
	// checkpoints, which are written last.
	runLive(t, cfg, func() error {
		if n := f.count(t, "SELECT count() FROM audit_events FINAL"); n != total {
			return fmt.Errorf("%d of %d events projected", n, total)
		}
		cp, err := f.p.Checkpoints(context.Background())
		if err != nil {
			return err
		}
		for p, e := range end {
			if e > 0 && cp[p] != e {
				return fmt.Errorf("partition %d: checkpoint %d, end offset %d", p, cp[p], e)
			}
		}
		return nil
	})
	live := f.checksums(t)

	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := runner.Rebuild(ctx, cfg, true, nil); err != nil {
		t.Fatal(err)
	}
	if rebuilt := f.checksums(t); !reflect.DeepEqual(rebuilt, live) {
		t.Errorf("rebuilt %v, live %v", rebuilt, live)
	}
}

func eventsCluster(t *testing.T) kafka.Config {
	t.Helper()
	return kafkatest.NewConfig(t, 3)
}

// produce appends the logs to the events topic, keyed by run, runs
// interleaved as the executor's group commits interleave them.
func produce(t *testing.T, kc kafka.Config, logs []*runLog) {
	t.Helper()
	prod, err := kafka.NewProducer(kc)
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	all := make([][]events.Envelope, len(logs))
	for i, l := range logs {
		all[i] = l.Events()
	}
	for _, e := range eventstest.Interleave(all...) {
		raw, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		if err := prod.Produce(context.Background(), kc.EventsTopic(), e.RunID, raw); err != nil {
			t.Fatal(err)
		}
	}
}

// runLive runs the projector until done reports nil (polled with a
// deadline), then stops it.
func runLive(t *testing.T, cfg runner.Config, done func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r, err := runner.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	stopped := make(chan error, 1)
	go func() { stopped <- r.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-stopped; err != nil {
			t.Errorf("runner: %v", err)
		}
	}()
	eventually.Succeeds(t, testTimeout, "projector caught up", done)
}
