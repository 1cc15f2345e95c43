package executor_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/executor"
)

// probe is an engine that streams deltas into an item and then either waits
// for its executor to die (first) or completes the run, recording what the
// run's handle says at each Execute.
type probe struct {
	first bool
	mu    sync.Mutex
	bytes []int64 // Run.EventBytes at each Execute
	delta bool    // Run.Events held an item delta
}

// Implements honours nothing beyond CreateRun and CancelRun.
func (*probe) Implements(string) bool { return false }

// Snapshot adds nothing to the profile.
func (*probe) Snapshot(p profile.Profile, grants []events.PermissionGrant) (profile.Snapshot, error) {
	return profile.NewSnapshot(p, nil, grants)
}

func (p *probe) Execute(ctx context.Context, run *executor.Run, _ profile.Profile) error {
	p.note(run)
	if p.first {
		item := events.Draft{Type: events.ItemStarted, ItemID: "itm_probe", Payload: events.ItemStartedPayload{ItemType: events.ItemAssistantMessage}}
		drafts := []events.Draft{item}
		for range 3 {
			drafts = append(drafts, events.Draft{Type: events.ItemDelta, ItemID: "itm_probe", Payload: events.ItemDeltaPayload{Delta: "streamed text"}})
		}
		if _, err := run.Append(ctx, executor.AppendOptions{}, drafts...); err != nil {
			return err
		}
		p.note(run)
		<-ctx.Done() // until the executor is killed
		return ctx.Err()
	}
	_, err := run.Append(ctx, executor.AppendOptions{}, events.Draft{Type: events.RunCompleted, Payload: events.RunCompletedPayload{Output: "ok"}})
	return err
}

func (p *probe) note(run *executor.Run) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.bytes = append(p.bytes, run.EventBytes())
	for _, e := range run.Events() {
		p.delta = p.delta || e.Type == events.ItemDelta
	}
}

func (h *harness) startWithEngine(name string, eng executor.Engine) *executor.Executor {
	h.t.Helper()
	log := zaptest.NewLogger(h.t, zaptest.Level(zap.ErrorLevel)).Named(name)
	ex, err := executor.New(executor.Config{Kafka: h.kcfg, ID: name, CommandKeys: h.keys}, eng, h.cat, log)
	if err != nil {
		h.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = ex.Run(ctx) }()
	h.t.Cleanup(func() { cancel(); <-done })
	return ex
}

// TestRunCountsItsEventBytesAcrossOwners: Run.EventBytes is the size of the
// run's records on the log, deltas included, and a new owner counts the
// same from the log it rebuilds from; Run.Events keeps no deltas.
func TestRunCountsItsEventBytesAcrossOwners(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	first, second := &probe{first: true}, &probe{}
	exA := h.startWithEngine("exA", first)
	c := createRun(t, "acme", "bytes", "demo", "hi")
	h.send(c)
	h.waitFor("deltas streamed", func(map[string]events.RunState) bool { return count(h, c.RunID, events.ItemDelta) == 3 })
	exA.Kill()
	h.startWithEngine("exB", second)
	h.waitFor("completed by exB", statusIs(c.RunID, events.StatusCompleted))
	sizes := recordSizes(t, h, c.RunID)
	first.mu.Lock()
	second.mu.Lock()
	defer first.mu.Unlock()
	defer second.mu.Unlock()
	// accepted, snapshot_frozen, started; then the item and its 3 deltas.
	if want := sum(sizes[:7]); len(first.bytes) != 2 || first.bytes[0] != sum(sizes[:3]) || first.bytes[1] != want {
		t.Errorf("first owner counted %v, want [%d %d] (the records before and after its append)", first.bytes, sum(sizes[:3]), want)
	}
	// The second owner restored the run (checkpoint_restored, the item
	// failed runtime_lost) before driving it; it completed it after.
	if want := sum(sizes[:len(sizes)-1]); len(second.bytes) != 1 || second.bytes[0] != want {
		t.Errorf("second owner counted %v, want [%d] (every record but the completion)", second.bytes, want)
	}
	if first.delta || second.delta {
		t.Errorf("Run.Events held item deltas")
	}
}

// recordSizes returns the sizes of the run's records on the events topic.
func recordSizes(t *testing.T, h *harness, runID string) []int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var out []int64
	err := kafka.ReadTopic(ctx, h.kcfg, h.kcfg.EventsTopic(), func(r kafka.Record) error {
		if e, err := events.Decode(r.Value); err == nil && e.RunID == runID {
			out = append(out, int64(len(r.Value)))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sum(xs []int64) int64 {
	var n int64
	for _, x := range xs {
		n += x
	}
	return n
}
