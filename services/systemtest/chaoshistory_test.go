//go:build chaos

package systemtest_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/xbot-runtime/xbot/contracttests"
	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/infra/devstack/kafkatest"
	"github.com/xbot-runtime/xbot/services/loadtool"
	"github.com/xbot-runtime/xbot/services/stack"
)

// historyEvents is the history behind the takeover: enough that folding a
// partition from its start is no longer instant.
const historyEvents = 100_000

// TestChaosTakeoverAfterALongHistory grows a history of 100,000 events
// with a real executor (runs of the demo agent, created by signed commands
// as the API creates them), then moves every partition while runs are in
// flight: a second executor joins, so the group splits the partitions and
// the newcomer restores each one it is given from the partition's
// checkpoints, with the whole history behind them, and then, with
// runs with tool calls started on both, the first executor is killed, so
// the second takes over the rest mid-load.
// Every command is accounted for, the log invariant holds on Kafka and in
// Postgres, every run ends, and every run with a tool call completed with
// its tool run once.
//
// It does not run in parallel with the other scenarios: growing the history
// keeps both cores of the standard machine busy for half a minute, and its
// checks read the whole history twice and rebuild the Postgres view from
// it, under deadlines the other scenarios' load would eat into.
func TestChaosTakeoverAfterALongHistory(t *testing.T) {
	kafkatest.RequireFake(t, "a history of 100,000 events takes many minutes to build on a three-broker cluster on one machine")
	c := newChaos(t)
	ex1 := c.stack("ex1", nil, stack.Executor)
	b := growHistory(t, c, historyEvents)
	lctx, stopLoad := context.WithCancel(t.Context())
	var load []string
	var loadErr error
	var wg sync.WaitGroup
	wg.Go(func() { load, loadErr = b.Sustain(lctx, 128) })
	ex2 := c.stack("ex2", nil, stack.Executor)
	eventually.Holds(t, time.Minute, "ex2 owns a partition", func() bool { return len(ex2.Executor.Partitions()) > 0 })
	// The tool runs start on both executors; once the first has ended,
	// the rest are in flight when ex1 dies, and a run of the "held" agent
	// is whatever the machine's speed: its tool call waits until the
	// takeover is done.
	ids := c.createRunsOf("held", "history-held", 1)
	ids = append(ids, c.createRuns("history", chaosN(60, 30))...)
	eventually.Holds(t, time.Minute, "a tool run ended", func() bool { return notEnded(b, ids) < len(ids) })
	inFlight, toolRunsLeft := b.Pending(), notEnded(b, ids)
	ex1.Executor.Kill()
	t.Logf("ex2 owns %v; ex1 killed with %d history runs and %d of %d tool runs not ended", ex2.Executor.Partitions(),
		inFlight, toolRunsLeft, len(ids))
	eventually.Holds(t, 2*time.Minute, "ex2 owns every partition", func() bool {
		return len(ex2.Executor.Partitions()) == b.Partitions()
	})
	c.release(ids[:1])
	stopLoad()
	wg.Wait()
	if loadErr != nil {
		t.Fatalf("load: %v", loadErr)
	}
	if inFlight == 0 || toolRunsLeft == 0 {
		t.Errorf("the takeover found %d history runs and %d tool runs in flight: the scenario proves nothing", inFlight,
			toolRunsLeft)
	}
	checkHistoryTakeover(t, c, b, ids, load)
}

// growHistory builds a history of at least n events on c's system.
func growHistory(t *testing.T, c *chaos, n int64) *loadtool.HistoryBuilder {
	t.Helper()
	b, err := loadtool.NewHistoryBuilder(t.Context(), loadtool.HistoryBuilderConfig{Kafka: c.kcfg, CommandKeys: c.keys,
		TenantID: tenant, AgentID: "demo", Window: 256, Logger: zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	began := time.Now()
	if err := b.Grow(t.Context(), n); err != nil {
		t.Fatalf("grow the history: %v", err)
	}
	runs, _ := b.Runs()
	t.Logf("history: %d events, %d runs in %s", b.Events(), runs, time.Since(began).Round(time.Millisecond))
	return b
}

// notEnded counts the runs of ids that have not ended.
func notEnded(b *loadtool.HistoryBuilder, ids []string) int {
	n := 0
	for _, st := range b.Ended(ids) {
		if st == "" {
			n++
		}
	}
	return n
}

// checkHistoryTakeover waits for every run to end and the Postgres view to
// catch up, then checks the protocol's guarantees: the chaos checks on the
// tool runs, every history run completed, every command accounted for.
func checkHistoryTakeover(t *testing.T, c *chaos, b *loadtool.HistoryBuilder, ids, load []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	all := slices.Concat(ids, load)
	if err := b.AwaitEnded(ctx, all); err != nil {
		t.Fatalf("%d of %d runs ended: %v", len(all)-notEnded(b, all), len(all), err)
	}
	for id, st := range b.Ended(load) {
		if st != events.RunCompleted {
			t.Errorf("history run %s ended %s, want %s", id, st, events.RunCompleted)
		}
	}
	eventually.Succeeds(t, 2*time.Minute, "postgres projector caught up", func() error {
		lag, err := c.front.Projectors["postgres"].Lag(ctx)
		if err != nil || lag.Total() != 0 {
			return fmt.Errorf("lag %d (%w)", lag.Total(), err)
		}
		return nil
	})
	c.check(c.front, ids)
	if err := contracttests.CommandsAccounted(ctx, c.kcfg); err != nil {
		t.Errorf("commands not accounted for:\n%v", err)
	}
}
