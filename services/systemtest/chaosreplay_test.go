//go:build chaos

package systemtest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/xbot-runtime/xbot/contracttests"
	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/projections/runner"
	"github.com/xbot-runtime/xbot/services/api/client"
	"github.com/xbot-runtime/xbot/services/stack"
)

// TestChaosCommandsTopicReplayed produces every command record again,
// shuffled, after a workload: every replayed command is recorded as a
// duplicate and nothing else changes.
func TestChaosCommandsTopicReplayed(t *testing.T) {
	t.Parallel()
	c := newChaos(t)
	c.stack("ex1", nil, stack.Executor)
	ids := c.createRuns("dup", chaosN(50, 20))
	c.untilTerminal(ids, 2*time.Minute, 50*time.Millisecond, nil)
	for i, id := range ids[:len(ids)/4] { // cancels of completed runs: no_effect outcomes
		if _, err := apiOf(t, c.front).CancelRun(t.Context(), id, "", client.CommandOptions{IdempotencyKey: fmt.Sprint("dup-cancel-", i), Wait: client.WaitFor(0)}); err != nil {
			t.Fatalf("cancel: %v", err)
		}
	}
	eventually.Succeeds(t, 30*time.Second, "cancels recorded", func() error {
		if n := c.countKafka(events.CommandNoEffect); n != len(ids)/4 {
			return fmt.Errorf("%d no_effect outcomes", n)
		}
		return nil
	})
	before := c.logByRun()
	c.check(c.front, ids)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var cmds []kafka.Record
	if err := kafka.ReadTopic(ctx, c.kcfg, c.kcfg.CommandsTopic(), func(r kafka.Record) error {
		cmds = append(cmds, r)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	rng := newRand(t)
	rng.Shuffle(len(cmds), func(i, j int) { cmds[i], cmds[j] = cmds[j], cmds[i] })
	prod, err := kafka.NewProducer(c.kcfg)
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	for _, r := range cmds {
		if err := prod.ProduceWithHeaders(ctx, c.kcfg.CommandsTopic(), r.Key, r.Value, r.Headers); err != nil {
			t.Fatal(err)
		}
	}
	eventually.Succeeds(t, time.Minute, "every replayed command recorded as a duplicate", func() error {
		if n := c.countKafka(events.CommandDuplicate); n != len(cmds) {
			return fmt.Errorf("%d duplicate outcomes for %d replayed commands", n, len(cmds))
		}
		return nil
	})
	c.check(c.front, ids)
	after := c.logByRun()
	if !maps.EqualFunc(before, after, slices.Equal) {
		t.Errorf("the replay changed run logs beyond duplicate outcomes")
	}
}

// countKafka counts the committed events of type typ.
func (c *chaos) countKafka(typ events.Type) int {
	c.t.Helper()
	n := 0
	for _, e := range c.kafkaEvents() {
		if e.Type == typ {
			n++
		}
	}
	return n
}

// logByRun returns every run's event ids without duplicate outcomes.
func (c *chaos) logByRun() map[string][]string {
	c.t.Helper()
	out := map[string][]string{}
	for _, e := range c.kafkaEvents() {
		if e.Type != events.CommandDuplicate {
			out[e.RunID] = append(out[e.RunID], e.EventID)
		}
	}
	return out
}

func (c *chaos) kafkaEvents() []events.Envelope {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	evs, err := contracttests.KafkaSource(c.kcfg)(ctx)
	if err != nil {
		c.t.Fatal(err)
	}
	return evs
}

// TestChaosProjectorRestartedMidStream stops the Postgres projector while
// runs stream, writes a poison run (a seq gap) to the events topic, and
// starts a projector elsewhere: every run is projected once, the poison run
// is dead-lettered, and the view equals one rebuilt from offset zero.
func TestChaosProjectorRestartedMidStream(t *testing.T) {
	t.Parallel()
	c := newChaos(t, stack.API)
	c.stack("ex1", nil, stack.Executor)
	proj := c.stack("proj1", nil, stack.ProjectorPostgres)
	ids := c.createRuns("proj", chaosN(50, 20))
	eventually.Succeeds(t, 30*time.Second, "the projector is mid-stream", func() error {
		var n int
		if err := c.front.Pool.QueryRow(context.Background(), `SELECT count(*) FROM run_events`).Scan(&n); err != nil || n < 3*len(ids) {
			return fmt.Errorf("%d rows (%w)", n, err)
		}
		return nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	proj.Stop(ctx)
	bad := c.poison(ctx)
	proj = c.stack("proj2", nil, stack.ProjectorPostgres)
	t.Logf("projector restarted; poison run %s written", bad)
	c.untilTerminal(ids, 2*time.Minute, 50*time.Millisecond, nil)
	c.check(proj, ids, bad)
	eventually.Succeeds(t, 30*time.Second, "the poison run dead-lettered", func() error {
		return c.deadLettered(ctx, bad, "3")
	})
	live, err := c.front.Store.Checksums(ctx)
	if err != nil {
		t.Fatal(err)
	}
	proj.Stop(ctx) // the projector leaves its group: a rebuild may start
	store := postgresView(ctx, t, c.dsn, c.kcfg)
	t.Logf("live view taken; rebuilding")
	rctx, rcancel := context.WithTimeout(context.Background(), 20*time.Second) // a clean rebuild of this log takes ~1 s
	defer rcancel()
	eventually.Succeeds(t, 20*time.Second, "rebuild", func() error {
		return runner.Rebuild(rctx, runner.Config{Kafka: c.kcfg, Projector: store, Logger: zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel))}, true, nil)
	})
	rebuilt, err := store.Checksums(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(live, rebuilt) {
		t.Errorf("the view differs from one rebuilt from the log:\nlive    %v\nrebuilt %v", live, rebuilt)
	}
}

// poison writes a run whose log skips seq 2 and returns its id.
func (c *chaos) poison(ctx context.Context) string {
	c.t.Helper()
	bad := "run_01J0000000000000000000BAD2"
	prod, err := kafka.NewProducer(c.kcfg)
	if err != nil {
		c.t.Fatal(err)
	}
	defer prod.Close()
	id := events.Identity{RunID: bad, TenantID: tenant}
	for _, seq := range []int64{1, 3} {
		env, err := events.Draft{Type: events.RunAccepted, CommandID: events.DerivedID("cmd", bad, fmt.Sprint(seq)),
			Payload: events.RunAcceptedPayload{AgentID: "tooler", IdempotencyKey: fmt.Sprint("k", seq), Actor: events.Actor{Type: "user", ID: "u"}}}.
			Seal(id, seq, events.NewID("evt"), time.Now().UnixMilli())
		if err != nil {
			c.t.Fatal(err)
		}
		raw, _ := json.Marshal(env)
		if err := prod.Produce(ctx, c.kcfg.WithDefaults().EventsTopic(), bad, raw); err != nil {
			c.t.Fatal(err)
		}
	}
	return bad
}

// deadLettered checks the Postgres projector dead-lettered run at seq, with
// a reason.
func (c *chaos) deadLettered(ctx context.Context, run, seq string) error {
	n := 0
	err := kafka.ReadTopic(ctx, c.kcfg, c.kcfg.WithDefaults().DeadLetterTopic(), func(r kafka.Record) error {
		h := r.Headers
		if h[runner.HeaderProjector] == "postgres" && h[runner.HeaderRunID] == run && h[runner.HeaderSeq] == seq && h[runner.HeaderReason] != "" {
			n++
		}
		return nil
	})
	if err != nil || n == 0 {
		return fmt.Errorf("%d dead letters of %s (%w)", n, run, err)
	}
	return nil
}
