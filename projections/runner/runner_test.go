package runner_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
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

// memView is an in-memory view: it keeps each run's last seq and refuses a
// gap or a payload marked "poison", as a real view would.
type memView struct {
	mu       sync.Mutex
	seq      map[string]int64
	failures int // transient failures left before Apply succeeds
	applied  int
	next     map[int32]int64
	maxBatch int
	batches  [][]runner.Record // every batch handed to Apply, in order
	cost     time.Duration     // per Apply, as a real store's round trip
}

func newMemView() *memView { return &memView{seq: map[string]int64{}} }

func (v *memView) Name() string { return "mem" }

func (v *memView) Apply(_ context.Context, batch []runner.Record) error {
	if v.cost > 0 {
		<-time.After(v.cost) // the store's round trip, not synchronisation
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.failures > 0 {
		v.failures--
		return errors.New("database unavailable")
	}
	v.maxBatch = max(v.maxBatch, len(batch))
	v.batches = append(v.batches, batch)
	for _, r := range batch {
		if r.Event.Seq <= v.seq[r.Event.RunID] {
			continue // delivered again: idempotent
		}
		if r.Event.Seq != v.seq[r.Event.RunID]+1 {
			return runner.Poison(r, fmt.Sprintf("seq gap: have %d", v.seq[r.Event.RunID]))
		}
		if r.Event.Type == events.RunFailed {
			return runner.Poison(r, "this view cannot apply runtime.run.failed")
		}
	}
	for _, r := range batch {
		if r.Event.Seq == v.seq[r.Event.RunID]+1 {
			v.seq[r.Event.RunID] = r.Event.Seq
			v.applied++
		}
	}
	return nil
}

func (v *memView) Checkpoints(context.Context) (map[int32]int64, error) { return v.next, nil }
func (v *memView) Reset(context.Context) error                          { return nil }

func (v *memView) seqOf(run string) int64 {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.seq[run]
}

func cluster(t *testing.T) kafka.Config {
	t.Helper()
	return kafkatest.NewConfig(t, 3)
}

// writeRun appends a run's events (accepted, started, n deltas in one item,
// then the given last type) to the events topic.
func writeRun(t *testing.T, kc kafka.Config, runID string, last events.Type) {
	t.Helper()
	writeRunWith(t, kc, runID, last, func([]byte) {})
}

// writeRunWith writes a run as writeRun does, each event produced on its
// own and first handed to seen.
func writeRunWith(t *testing.T, kc kafka.Config, runID string, last events.Type, seen func(raw []byte)) {
	t.Helper()
	prod, err := kafka.NewProducer(kc)
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	l := eventstest.New(t, events.Identity{RunID: runID, TenantID: "acme"}).
		Accepted(events.DerivedID("cmd", runID), events.RunAcceptedPayload{AgentID: "a",
			IdempotencyKey: "k-" + runID, Actor: events.Actor{Type: "user", ID: "u"}}).
		Started("")
	if last == events.RunFailed {
		l.Failed("internal", "")
	} else {
		l.Completed("ok")
	}
	for _, env := range l.Events() {
		raw, _ := json.Marshal(env)
		seen(raw)
		if err := prod.Produce(context.Background(), kc.EventsTopic(), runID, raw); err != nil {
			t.Fatal(err)
		}
	}
}

func start(t *testing.T, kc kafka.Config, v runner.Projector) *runner.Runner {
	t.Helper()
	return startWith(t, kc, v, func(*runner.Config) {})
}

// startWith starts a runner of v whose configuration tune has changed.
func startWith(t *testing.T, kc kafka.Config, v runner.Projector, tune func(*runner.Config)) *runner.Runner {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cfg := runner.Config{Kafka: kc, Projector: v, Logger: zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel)),
		RetryInitial: 5 * time.Millisecond, RetryMax: 20 * time.Millisecond}
	tune(&cfg)
	r, err := runner.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("runner: %v", err)
		}
	})
	<-r.Running()
	return r
}

// runnerWait bounds every wait for the runner to catch up on a loaded machine.
const runnerWait = 15 * time.Second

func TestRunnerProjectsRetriesAndReportsLag(t *testing.T) {
	t.Parallel()
	kc := cluster(t)
	v := newMemView()
	v.failures = 3 // the first attempts fail: retried, never skipped
	runs := []string{"run_01J000000000000000000000A1", "run_01J000000000000000000000A2", "run_01J000000000000000000000A3"}
	for _, id := range runs {
		writeRun(t, kc, id, events.RunCompleted)
	}
	r := start(t, kc, v)
	eventually.Succeeds(t, runnerWait, "every run projected", func() error {
		for _, id := range runs {
			if s := v.seqOf(id); s != 3 {
				return fmt.Errorf("run %s at seq %d", id, s)
			}
		}
		return nil
	})
	eventually.Succeeds(t, runnerWait, "lag reaches zero", func() error {
		lag, err := r.Lag(context.Background())
		if err != nil {
			return err
		}
		if lag.Total() != 0 {
			return fmt.Errorf("lag %d", lag.Total())
		}
		return nil
	})
}

func TestRunnerDeadLettersPoisonAndStopsOnlyThatRun(t *testing.T) {
	t.Parallel()
	kc := cluster(t)
	v := newMemView()
	bad, good := "run_01J000000000000000000000B1", "run_01J000000000000000000000B2"
	writeRun(t, kc, bad, events.RunFailed) // seq 3 is poison for this view
	writeRun(t, kc, good, events.RunCompleted)
	r := start(t, kc, v)
	eventually.Succeeds(t, runnerWait, "the good run projected", func() error {
		if s := v.seqOf(good); s != 3 {
			return fmt.Errorf("good run at seq %d", s)
		}
		return nil
	})
	var dead []kafka.Record
	eventually.Succeeds(t, runnerWait, "the poison record dead-lettered", func() error {
		dead = dead[:0]
		err := kafka.ReadTopic(context.Background(), kc, kc.DeadLetterTopic(), func(rec kafka.Record) error {
			dead = append(dead, rec)
			return nil
		})
		if err != nil || len(dead) != 1 {
			return fmt.Errorf("%d dead letters (%w)", len(dead), err)
		}
		return nil
	})
	h := dead[0].Headers
	if dead[0].Key != bad || h[runner.HeaderRunID] != bad || h[runner.HeaderSeq] != "3" || h[runner.HeaderProjector] != "mem" ||
		h[runner.HeaderReason] == "" {
		t.Errorf("dead letter key %q headers %v", dead[0].Key, h)
	}
	if s := v.seqOf(bad); s != 2 {
		t.Errorf("bad run projected to seq %d, want 2 (stopped before the poison record)", s)
	}
	if got := r.Stopped(); got[bad] != 3 || len(got) != 1 {
		t.Errorf("stopped runs %v", got)
	}
}

func TestRunnerRemembersStoppedRunsAcrossRestarts(t *testing.T) {
	t.Parallel()
	kc := cluster(t)
	v := newMemView()
	bad := "run_01J000000000000000000000C1"
	writeRun(t, kc, bad, events.RunFailed)
	first := start(t, kc, v)
	eventually.Succeeds(t, runnerWait, "the run stopped", func() error {
		if first.Stopped()[bad] != 3 {
			return errors.New("not stopped yet")
		}
		return nil
	})
	// A second runner of the same projector reads the dead letters first.
	again, err := runner.New(context.Background(), runner.Config{Kafka: kc, Projector: newMemView(), Logger: zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel))})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if got := again.Stopped(); got[bad] != 3 {
		t.Errorf("restarted runner knows stopped runs %v, want %s at 3", got, bad)
	}
}

func TestRebuildFromTheBeginning(t *testing.T) {
	t.Parallel()
	kc := cluster(t)
	bad := "run_01J000000000000000000000D1"
	writeRun(t, kc, bad, events.RunFailed)
	for i := range 5 {
		writeRun(t, kc, fmt.Sprintf("run_01J000000000000000000000E%d", i), events.RunCompleted)
	}
	live := newMemView()
	r := start(t, kc, live)
	eventually.Succeeds(t, runnerWait, "live view stopped the bad run", func() error {
		if r.Stopped()[bad] != 3 {
			return errors.New("not yet")
		}
		return nil
	})
	// The live projector is running: a rebuild is refused.
	err := runner.Rebuild(context.Background(), runner.Config{Kafka: kc, Projector: newMemView(), Logger: zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel))}, true, nil)
	if !errors.Is(err, runner.ErrProjectorRunning) {
		t.Fatalf("rebuild beside a live projector: %v", err)
	}
}

func TestRebuildProjectsEverythingAndReportsProgress(t *testing.T) {
	t.Parallel()
	kc := cluster(t)
	var runs []string
	for i := range 6 {
		id := fmt.Sprintf("run_01J000000000000000000000F%d", i)
		runs = append(runs, id)
		writeRun(t, kc, id, events.RunCompleted)
	}
	v := &resettable{memView: newMemView()}
	var last runner.Progress
	reports := 0
	err := runner.Rebuild(context.Background(), runner.Config{Kafka: kc, Projector: v, Logger: zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel))}, true,
		func(p runner.Progress) { last, reports = p, reports+1 })
	if err != nil {
		t.Fatal(err)
	}
	if !v.reset {
		t.Error("the view was not reset")
	}
	for _, id := range runs {
		if s := v.seqOf(id); s != 3 {
			t.Errorf("run %s rebuilt to seq %d, want 3", id, s)
		}
	}
	if !last.Finished || last.Done != 18 || last.Total != last.Done || reports == 0 {
		t.Errorf("last progress %+v after %d reports, want 18 records finished", last, reports)
	}
}

type resettable struct {
	*memView
	reset bool
}

func (r *resettable) Reset(context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reset, r.seq = true, map[string]int64{}
	return nil
}

// TestRunnerBatchesAndKeepsOrderPerRun: with many records waiting, Apply gets
// batches of many records, yet each run's seqs arrive in order (the view
// refuses a gap as poison, and nothing is dead-lettered).
func TestRunnerBatchesAndKeepsOrderPerRun(t *testing.T) {
	t.Parallel()
	kc := cluster(t)
	var runs []string
	for i := range 40 {
		id := fmt.Sprintf("run_01J0000000000000000000G%03d", i)
		runs = append(runs, id)
		writeRun(t, kc, id, events.RunCompleted)
	}
	v := newMemView()
	v.cost = 20 * time.Millisecond
	r := start(t, kc, v)
	eventually.Succeeds(t, runnerWait, "every run projected", func() error {
		for _, id := range runs {
			if s := v.seqOf(id); s != 3 {
				return fmt.Errorf("run %s at seq %d", id, s)
			}
		}
		return nil
	})
	if len(r.Stopped()) != 0 {
		t.Errorf("runs stopped: %v", r.Stopped())
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.maxBatch < 10 {
		t.Errorf("largest batch %d records, want many (pipelined delivery)", v.maxBatch)
	}
}

// deliveries counts every record handed to Apply, by (run, seq), across the
// members of the group sharing it.
type deliveries struct {
	mu   sync.Mutex
	seen map[string]int
	last map[string]int64 // run → last seq delivered
	back []string         // a run's seq delivered after a later one
	by   map[string]int   // member → records delivered to it
}

func (d *deliveries) deliver(member string, batch []runner.Record) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.by[member] += len(batch)
	for _, r := range batch {
		d.seen[fmt.Sprintf("%s/%d", r.Event.RunID, r.Event.Seq)]++
		if r.Event.Seq <= d.last[r.Event.RunID] {
			d.back = append(d.back, fmt.Sprintf("%s/%d", r.Event.RunID, r.Event.Seq))
		}
		d.last[r.Event.RunID] = r.Event.Seq
	}
}

func (d *deliveries) of(member string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.by[member]
}

// member is one group member's view over the shared deliveries.
type member struct {
	d    *deliveries
	name string
}

func (m member) Name() string { return "count" }

func (m member) Apply(_ context.Context, batch []runner.Record) error {
	m.d.deliver(m.name, batch)
	return nil
}

func (m member) Checkpoints(context.Context) (map[int32]int64, error) { return nil, nil }
func (m member) Reset(context.Context) error                          { return nil }

// TestAMemberJoiningMidStreamTakesOverWithoutRedelivery: a second runner of
// the view joins the group while the first is applying; the partitions it
// takes over resume after what the first applied and committed, so every
// record reaches the view once, each run's in order.
func TestAMemberJoiningMidStreamTakesOverWithoutRedelivery(t *testing.T) {
	t.Parallel()
	kc := cluster(t)
	d := &deliveries{seen: map[string]int{}, last: map[string]int64{}, by: map[string]int{}}
	start(t, kc, member{d, "a"})
	runs := 0
	write := func() {
		writeRun(t, kc, fmt.Sprintf("run_01J0000000000000000000J%03d", runs), events.RunCompleted)
		runs++
	}
	for range 20 {
		write()
	}
	start(t, kc, member{d, "b"})
	// Runs keep coming until the group has handed the newcomer a partition.
	eventually.Succeeds(t, runnerWait, "the second member applies records", func() error {
		if d.of("b") == 0 {
			write()
			return errors.New("nothing delivered to the second member yet")
		}
		return nil
	})
	for range 20 {
		write()
	}
	eventually.Succeeds(t, runnerWait, "every record delivered", func() error {
		d.mu.Lock()
		defer d.mu.Unlock()
		if len(d.seen) < runs*3 {
			return fmt.Errorf("%d of %d records delivered", len(d.seen), runs*3)
		}
		return nil
	})
	d.mu.Lock()
	defer d.mu.Unlock()
	for k, n := range d.seen {
		if n != 1 {
			t.Errorf("record %s delivered %d times", k, n)
		}
	}
	if len(d.back) > 0 {
		t.Errorf("records delivered out of their run's order: %v", d.back)
	}
	if d.by["a"] == 0 {
		t.Error("the first member applied nothing")
	}
}
