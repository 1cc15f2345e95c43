package executor_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/infra/kafka/partition"
	"github.com/xbot-runtime/xbot/services/engine/model"
	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/executor"
)

// observedExecutor runs an executor whose log the test reads.
func (h *harness) observedExecutor(name string) (*executor.Executor, *observer.ObservedLogs) {
	h.t.Helper()
	core, logs := observer.New(zapcore.InfoLevel)
	log := zap.New(core).Named(name)
	ex, err := executor.New(executor.Config{Kafka: h.kcfg, ID: name, CommandKeys: h.keys}, scriptedEngine(log), h.cat, log)
	if err != nil {
		h.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = ex.Run(ctx) }()
	h.t.Cleanup(func() { cancel(); <-done })
	return ex, logs
}

// deleteEvents deletes every record of the events topic written so far,
// as a time retention or an operator's DeleteRecords would.
func (h *harness) deleteEvents() {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cl, err := kafka.NewClient(h.kcfg)
	if err != nil {
		h.t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ends, err := adm.ListEndOffsets(ctx, h.kcfg.EventsTopic())
	if err != nil {
		h.t.Fatal(err)
	}
	offs := kadm.Offsets{}
	ends.Each(func(o kadm.ListedOffset) { offs.AddOffset(o.Topic, o.Partition, o.Offset, -1) })
	res, err := adm.DeleteRecords(ctx, offs)
	if err != nil {
		h.t.Fatal(err)
	}
	if err := res.Error(); err != nil {
		h.t.Fatal(err)
	}
	starts, err := adm.ListStartOffsets(ctx, h.kcfg.EventsTopic())
	if err != nil {
		h.t.Fatal(err)
	}
	starts.Each(func(o kadm.ListedOffset) {
		if end, _ := ends.Lookup(o.Topic, o.Partition); o.Offset != end.Offset {
			h.t.Fatalf("partition %d starts at %d after deleting up to %d", o.Partition, o.Offset, end.Offset)
		}
	})
}

// eventsOf reads what is left on the events topic of run id.
func (h *harness) eventsOf(runID string) []events.Envelope {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out []events.Envelope
	err := kafka.ReadTopic(ctx, h.kcfg, h.kcfg.EventsTopic(), func(r kafka.Record) error {
		if r.Key == runID {
			env, err := events.Decode(r.Value)
			if err != nil {
				return err
			}
			out = append(out, env)
		}
		return nil
	})
	if err != nil {
		h.t.Fatal(err)
	}
	return out
}

func (h *harness) awaitEvent(what, runID string, ok func(events.Envelope) bool) events.Envelope {
	h.t.Helper()
	var found events.Envelope
	eventually.Succeeds(h.t, 20*time.Second, what, func() error {
		for _, e := range h.eventsOf(runID) {
			if ok(e) {
				found = e
				return nil
			}
		}
		return fmt.Errorf("no such event of %s yet", runID)
	})
	return found
}

func ofType(t events.Type) func(events.Envelope) bool {
	return func(e events.Envelope) bool { return e.Type == t }
}

// A new owner answers commands on finished runs from their checkpoints: the
// events they refer to may be gone.
func TestFinishedRunsAnswerFromCheckpointsAfterTheirEventsAreDeleted(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ex1 := h.startExecutor("ex1", nil)
	old := createRun(t, "acme", "old", "demo", "hello")
	h.send(old)
	h.waitFor("completed", statusIs(old.RunID, events.StatusCompleted))
	h.send(cancelRun(t, "acme", old.RunID, "cancel-1"))
	h.waitFor("no_effect", func(map[string]events.RunState) bool { return count(h, old.RunID, events.CommandNoEffect) == 1 })
	ex1.Kill()
	h.deleteEvents()

	_, logs := h.observedExecutor("ex2")
	h.send(createRun(t, "acme", "old", "demo", "hello")) // a client's retry
	dup := h.awaitEvent("the retry answered as a duplicate", old.RunID, ofType(events.CommandDuplicate))
	p, err := dup.DecodePayload()
	if err != nil {
		t.Fatal(err)
	}
	if d := p.(*events.CommandDuplicatePayload); d.OriginalOutcome != events.OutcomeAccepted || d.OriginalCommandID != old.CommandID {
		t.Errorf("duplicate names %s (%s), want the original create %s (accepted)", d.OriginalCommandID, d.OriginalOutcome, old.CommandID)
	}
	if dup.Seq <= 1 {
		t.Errorf("the duplicate has seq %d: the new owner did not continue the run's log", dup.Seq)
	}
	h.send(cancelRun(t, "acme", old.RunID, "cancel-1")) // the same cancel again
	h.awaitEvent("the repeated cancel answered as a duplicate of no_effect", old.RunID, func(e events.Envelope) bool {
		if e.Type != events.CommandDuplicate {
			return false
		}
		p, err := e.DecodePayload()
		return err == nil && p.(*events.CommandDuplicatePayload).OriginalOutcome == events.OutcomeNoEffect
	})
	h.send(cancelRun(t, "acme", old.RunID, "cancel-2"))
	h.awaitEvent("a new cancel answered no_effect", old.RunID, ofType(events.CommandNoEffect))

	fresh := createRun(t, "acme", "fresh", "demo", "again")
	h.send(fresh)
	h.awaitEvent("a new run completes", fresh.RunID, ofType(events.RunCompleted))

	for _, e := range logs.All() {
		if e.Level >= zapcore.ErrorLevel {
			t.Errorf("the new owner logged an error: %s %v", e.Message, e.ContextMap())
		}
	}
}

// A new owner reads the checkpoints from the latest base on, and still
// finds the runs that finished before it through the finished index.
func TestNewOwnerReadsFromTheLatestBase(t *testing.T) {
	defer executor.SetBaseMin(8)()
	h := newHarness(t)
	ex1 := h.startExecutor("ex1", nil)
	var runs []string
	for i := range 24 {
		c := createRun(t, "acme", fmt.Sprintf("k%d", i), "demo", "hi")
		h.send(c)
		runs = append(runs, c.RunID)
		h.waitFor("completed", statusIs(c.RunID, events.StatusCompleted))
	}
	ex1.Kill()
	total := h.checkpointRecords()

	_, logs := h.observedExecutor("ex2")
	first := createRun(t, "acme", "k0", "demo", "hi")
	h.send(first)
	h.awaitEvent("the first run's retry answered as a duplicate", runs[0], ofType(events.CommandDuplicate))
	read := 0
	for _, e := range logs.FilterMessage("partition restored").All() {
		read += int(e.ContextMap()["checkpoint_records_read"].(int64))
	}
	if read == 0 || read >= total {
		t.Errorf("the new owner read %d of the %d checkpoint records; want fewer than all (from the latest base)", read, total)
	}
}

// checkpointRecords counts the committed records of the checkpoints topic.
func (h *harness) checkpointRecords() int {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	n := 0
	if err := kafka.ReadTopic(ctx, h.kcfg, h.kcfg.CheckpointsTopic(), func(r kafka.Record) error {
		if r.Key == "#partition" {
			var m map[string]any
			if err := json.Unmarshal(r.Value, &m); err != nil {
				return err
			}
		}
		n++
		return nil
	}); err != nil {
		h.t.Fatal(err)
	}
	return n
}

// Item deltas leave a run's checkpoint behind (the meta record says from
// where a new owner catches up); a new owner folds the deltas that followed
// it, so the run's log goes on gap-free. So does an owner that finds the
// lagging runs listed, as executors before lagFrom wrote the meta record.
// The run's model holds mid-stream until the first owner is gone: a run that
// finished streaming before the test read the meta record would leave its
// checkpoint lagging no more (a loaded CI run once did).
func TestNewOwnerFoldsTheDeltasAfterALaggingCheckpoint(t *testing.T) {
	t.Parallel()
	for _, listed := range []bool{false, true} {
		t.Run(fmt.Sprintf("listed=%v", listed), func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, slowProfile())
			gate := make(chan struct{})
			ex1 := h.startWithEngine("ex1", heldEngine(gate))
			c := createRun(t, "acme", "lag", "slow", "x")
			h.send(c)
			h.waitFor("streaming", func(map[string]events.RunState) bool { return count(h, c.RunID, events.ItemDelta) >= 4 })
			var meta map[string]any
			eventually.Succeeds(t, 10*time.Second, "the meta record says where the lagging run's events begin", func() error {
				if meta = h.lastMeta(c.RunID); meta["lagFrom"] == nil || meta["lagging"] != false {
					return fmt.Errorf("meta record: %v", meta)
				}
				return nil
			})
			ex1.Kill()
			if listed {
				meta["lagging"] = map[string]any{c.RunID: map[string]any{"from": meta["lagFrom"], "seq": 1}}
				delete(meta, "lagFrom")
				h.writeMeta(c.RunID, meta)
			}
			close(gate)
			h.startWithEngine("ex2", heldEngine(gate))
			states := h.waitFor("completed by ex2", statusIs(c.RunID, events.StatusCompleted))
			if got := completedAssistantMessages(states[c.RunID]); got != 1 {
				t.Fatalf("completed assistant messages = %d, want 1", got)
			}
			if n := count(h, c.RunID, events.RunCheckpointRestored); n != 1 {
				t.Fatalf("checkpoint_restored %d times, want 1", n)
			}
		})
	}
}

// heldEngine is the agent loop with heldModel for every profile.
func heldEngine(gate <-chan struct{}) executor.Engine {
	return engineOn(func(profile.Profile) model.Provider { return heldModel{gate: gate} }, zap.NewNop())
}

// heldModel streams six chunks 60 ms apart (the agent loop flushes a delta
// at most every 50 ms, so each but perhaps the last is a delta event of its
// own), then waits until gate is closed before it ends its answer.
type heldModel struct{ gate <-chan struct{} }

func (m heldModel) Stream(ctx context.Context, _ model.Request, onDelta func(model.Delta)) (model.Response, error) {
	var text strings.Builder
	emit := func(s string) {
		text.WriteString(s)
		onDelta(model.Delta{Text: s})
	}
	for i := range 6 {
		if i > 0 {
			select {
			case <-ctx.Done():
				return model.Response{Text: text.String()}, ctx.Err()
			case <-time.After(60 * time.Millisecond):
			}
		}
		emit(fmt.Sprintf("chunk %d ", i))
	}
	select {
	case <-ctx.Done():
		return model.Response{Text: text.String()}, ctx.Err()
	case <-m.gate:
	}
	emit("done")
	return model.Response{Text: text.String(), FinishReason: "stop"}, nil
}

// lastMeta returns the last meta record of the checkpoints partition of runID.
func (h *harness) lastMeta(runID string) map[string]any {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p := partitionOf(runID)
	rec, found, err := kafka.ReadLast(ctx, h.kcfg, h.kcfg.CheckpointsTopic(), p, func(r kafka.Record) bool { return r.Key == "#partition" })
	if err != nil || !found {
		h.t.Fatalf("last meta record of partition %d: found=%v, %v", p, found, err)
	}
	var m map[string]any
	if err := json.Unmarshal(rec.Value, &m); err != nil {
		h.t.Fatal(err)
	}
	return m
}

// writeMeta appends meta record m to the checkpoints partition of runID.
func (h *harness) writeMeta(runID string, m map[string]any) {
	h.t.Helper()
	raw, err := json.Marshal(m)
	if err != nil {
		h.t.Fatal(err)
	}
	cl, err := kafka.NewClient(h.kcfg, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		h.t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rec := &kgo.Record{Topic: h.kcfg.CheckpointsTopic(), Partition: partitionOf(runID), Key: []byte("#partition"), Value: raw}
	if err := cl.ProduceSync(ctx, rec).FirstErr(); err != nil {
		h.t.Fatal(err)
	}
}

func partitionOf(runID string) int32 { return partition.For(runID, testPartitions) }

// The create a follow-up sends carries where its parent's events are: every
// event of the parent lies in the range, also when the parent finished
// under an earlier owner and is read back from its checkpoint.
func TestFollowUpCreateLocatesItsParentAfterATakeover(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ex1 := h.startExecutor("ex1", nil)
	parent := createRun(t, "acme", "parent", "demo", "hello")
	h.send(parent)
	h.waitFor("completed", statusIs(parent.RunID, events.StatusCompleted))
	ex1.Kill()
	h.startExecutor("ex2", nil)
	fu, err := commands.New(commands.AppendUserInput, commands.Header{RunID: parent.RunID, PlatformSessionID: "sess-1",
		TenantID: "acme", Actor: events.Actor{Type: "user", ID: "u1"}, IdempotencyKey: "fu-1"},
		commands.AppendUserInputPayload{Intent: commands.IntentFollowUp, Content: "and then?"})
	if err != nil {
		t.Fatal(err)
	}
	h.send(fu)
	next := commands.FollowUpRunID(fu.CommandID, sandboxKeyOf(t, parent), testPartitions)
	h.waitFor("the follow-up completed", statusIs(next, events.StatusCompleted))

	var hist *commands.SessionHistory
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := kafka.ReadTopic(ctx, h.kcfg, h.kcfg.CommandsTopic(), func(r kafka.Record) error {
		var c commands.Envelope
		if r.Key != next || json.Unmarshal(r.Value, &c) != nil || c.Type != commands.CreateRun {
			return nil
		}
		p, err := c.DecodePayload()
		if err != nil {
			return err
		}
		hist = p.(*commands.CreateRunPayload).History
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if hist == nil || len(hist.Runs) != 1 || hist.Runs[0].RunID != parent.RunID {
		t.Fatalf("the follow-up's create carries history %+v, want its parent's range", hist)
	}
	ref := hist.Runs[0]
	n := 0
	if err := kafka.ReadTopic(ctx, h.kcfg, h.kcfg.EventsTopic(), func(r kafka.Record) error {
		env, err := events.Decode(r.Value)
		if err != nil || r.Key != parent.RunID || env.Type == events.CommandApplied || env.Type == events.CommandAccepted {
			return err // the follow-up's own outcome on the parent comes after the range was taken
		}
		n++
		if r.Partition != ref.Partition || r.Offset < ref.From || r.Offset >= ref.To {
			t.Errorf("the parent's %s (seq %d) is at %d/%d, outside the range %+v", env.Type, env.Seq, r.Partition, r.Offset, ref)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("no parent events read")
	}
}

func sandboxKeyOf(t *testing.T, c commands.Envelope) events.SandboxKey {
	t.Helper()
	p, err := c.DecodePayload()
	if err != nil {
		t.Fatal(err)
	}
	return p.(*commands.CreateRunPayload).SandboxKey
}
