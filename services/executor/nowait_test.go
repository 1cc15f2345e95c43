package executor_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/executor"
)

// stepEngine runs a test's steps on each run it is given.
type stepEngine struct {
	steps func(ctx context.Context, run *executor.Run) error
}

func (e stepEngine) Execute(ctx context.Context, run *executor.Run, _ profile.Profile) error {
	return e.steps(ctx, run)
}
func (stepEngine) Implements(string) bool { return false }
func (stepEngine) Snapshot(p profile.Profile, grants []events.PermissionGrant) (profile.Snapshot, error) {
	return profile.NewSnapshot(p, nil, grants)
}

// startHooked runs an executor with engine e and Kafka hooks until the test ends.
func (h *harness) startHooked(e executor.Engine, hooks *kafka.Hooks) {
	h.t.Helper()
	log := zaptest.NewLogger(h.t, zaptest.Level(zap.ErrorLevel))
	ex, err := executor.New(executor.Config{Kafka: h.kcfg, ID: "ex", Hooks: hooks, CommandKeys: h.keys}, e, h.cat, log)
	if err != nil {
		h.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = ex.Run(ctx) }()
	h.t.Cleanup(func() { cancel(); <-done })
}

func assistantStarted(id string) events.Draft {
	return events.Draft{Type: events.ItemStarted, ItemID: id, Payload: events.ItemStartedPayload{ItemType: events.ItemAssistantMessage}}
}

func assistantCompleted(id, text string) events.Draft {
	return events.Draft{Type: events.ItemCompleted, ItemID: id, Payload: events.ItemCompletedPayload{
		ItemType: events.ItemAssistantMessage, Status: events.ItemStatusCompleted, Content: text}}
}

func delta(id, text string) events.Draft {
	return events.Draft{Type: events.ItemDelta, ItemID: id, Payload: events.ItemDeltaPayload{Delta: text}}
}

var runCompleted = events.Draft{Type: events.RunCompleted, Payload: events.RunCompletedPayload{Output: "done"}}

// An append that does not wait returns while its transaction cannot commit,
// the run's state shows it at once, and the next append that waits commits
// it, in order and without a gap.
func TestAnAppendThatDoesNotWaitReturnsBeforeItsCommit(t *testing.T) {
	t.Parallel()
	h := newHarness(t, profile.Profile{ID: "nw", Model: profile.ModelScripted, Script: []profile.Turn{{Text: "unused"}}})
	var held atomic.Bool
	release := make(chan struct{})
	hooks := &kafka.Hooks{BeforeCommit: func(int32, []kafka.OutRecord) {
		if held.Load() {
			<-release
		}
	}}
	seen := make(chan events.RunState, 1)
	h.startHooked(stepEngine{steps: func(ctx context.Context, run *executor.Run) error {
		// The start commits with this append, which waits.
		if _, err := run.Append(ctx, executor.AppendOptions{}, assistantStarted("itm-a")); err != nil {
			return err
		}
		held.Store(true) // every commit from now on waits for release
		returned := make(chan error, 1)
		go func() {
			if err := run.Post(ctx, delta("itm-a", "hel")); err != nil {
				returned <- err
				return
			}
			_, err := run.Append(ctx, executor.AppendOptions{NoWait: true}, assistantCompleted("itm-a", "hello"))
			returned <- err
		}()
		select {
		case err := <-returned:
			if err != nil {
				return err
			}
		case <-time.After(30 * time.Second):
			t.Error("an append with NoWait waited for a commit that could not happen")
		}
		seen <- run.State()
		held.Store(false)
		close(release)
		_, err := run.Append(ctx, executor.AppendOptions{}, runCompleted)
		return err
	}}, hooks)
	c := createRun(t, "acme", "nowait-1", "nw", "hi")
	h.send(c)
	st := <-seen
	if it, ok := st.Item("itm-a"); !ok || it.Status != events.ItemStatusCompleted {
		t.Errorf("state after the NoWait append: item %+v (found %v), want it completed", it, ok)
	}
	states := h.waitFor("run completed", statusIs(c.RunID, events.StatusCompleted))
	if got := states[c.RunID].LastSeq; got != st.LastSeq+1 {
		t.Errorf("committed seq %d, want the NoWait state's %d and the completion", got, st.LastSeq)
	}
}

// A post the state machine refuses fails the run's next append, and nothing
// of it reaches the log.
func TestARefusedPostFailsTheNextAppend(t *testing.T) {
	t.Parallel()
	h := newHarness(t, profile.Profile{ID: "nw", Model: profile.ModelScripted, Script: []profile.Turn{{Text: "unused"}}})
	got := make(chan error, 1)
	h.startHooked(stepEngine{steps: func(ctx context.Context, run *executor.Run) error {
		if err := run.Post(ctx, delta("itm-unknown", "x")); err != nil {
			return err
		}
		_, err := run.Append(ctx, executor.AppendOptions{}, assistantStarted("itm-b"))
		got <- err
		if err == nil {
			return errors.New("the append after a refused post succeeded")
		}
		return run.Fail(ctx, events.FailInternal, "a post was refused")
	}}, nil)
	c := createRun(t, "acme", "nowait-2", "nw", "hi")
	h.send(c)
	if err := <-got; err == nil || errors.Is(err, kafka.ErrPartitionLost) {
		t.Errorf("append after a refused post: %v, want the state machine's refusal", err)
	}
	h.waitFor("run failed", statusIs(c.RunID, events.StatusFailed))
	for _, e := range h.eventsOf(c.RunID) {
		if e.Type == events.ItemDelta {
			t.Errorf("the refused delta is on the log: %+v", e)
		}
	}
}

// A run whose sandbox key is free starts in its admission's transaction: its
// snapshot and start follow the accepted event with no commit marker (which
// takes an offset) between them.
func TestARunWhoseKeyIsFreeStartsInItsAdmissionsTransaction(t *testing.T) {
	t.Parallel()
	h := newHarness(t, profile.Profile{ID: "nw", Model: profile.ModelScripted, Script: []profile.Turn{{Text: "unused"}}})
	h.startHooked(stepEngine{steps: func(ctx context.Context, run *executor.Run) error {
		_, err := run.Append(ctx, executor.AppendOptions{}, runCompleted)
		return err
	}}, nil)
	c := createRun(t, "acme", "start-at-admission", "nw", "hi")
	h.send(c)
	h.waitFor("run completed", statusIs(c.RunID, events.StatusCompleted))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var offsets []int64
	var types []events.Type
	err := kafka.ReadTopic(ctx, h.kcfg, h.kcfg.EventsTopic(), func(r kafka.Record) error {
		if r.Key != c.RunID {
			return nil
		}
		env, err := events.Decode(r.Value)
		if err != nil {
			return err
		}
		offsets, types = append(offsets, r.Offset), append(types, env.Type)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []events.Type{events.RunAccepted, events.CapabilitySnapshotFrozen, events.RunStarted}
	if len(types) < 3 || types[0] != want[0] || types[1] != want[1] || types[2] != want[2] {
		t.Fatalf("the run's first events are %v, want %v", types, want)
	}
	if offsets[1] != offsets[0]+1 || offsets[2] != offsets[1]+1 {
		t.Errorf("accepted, snapshot and start at offsets %v: not one transaction", offsets[:3])
	}
}

// Appends nobody waits for commit on their own: a run that posts a delta and
// then waits for something else still has it on the log.
func TestAppendsNobodyWaitsForCommitOnTheirOwn(t *testing.T) {
	t.Parallel()
	h := newHarness(t, profile.Profile{ID: "nw", Model: profile.ModelScripted, Script: []profile.Turn{{Text: "unused"}}})
	h.startHooked(stepEngine{steps: func(ctx context.Context, run *executor.Run) error {
		if _, err := run.Append(ctx, executor.AppendOptions{NoWait: true}, assistantStarted("itm-c")); err != nil {
			return err
		}
		if err := run.Post(ctx, delta("itm-c", "streaming")); err != nil {
			return err
		}
		<-ctx.Done() // a model that never answers
		return ctx.Err()
	}}, nil)
	c := createRun(t, "acme", "nowait-3", "nw", "hi")
	h.send(c)
	h.waitFor("the delta committed", func(map[string]events.RunState) bool { return count(h, c.RunID, events.ItemDelta) == 1 })
}
