package systemtest_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/infra/devstack/kafkatest"
	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/services/stack"
)

// TestExecutorKilledMidRunAnotherTakesOver kills an executor between flushing
// a transaction and ending it — its producer closed with the transaction
// open, as a crashed process leaves it — and checks that a second executor
// finishes the run with a clean log on Kafka and Postgres and that no command
// took effect twice.
func TestExecutorKilledMidRunAnotherTakesOver(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	front := e.start("front", nil, stack.API, stack.ProjectorPostgres)
	var killed atomic.Bool
	var victim atomic.Pointer[stack.Stack]
	// Killed in the first transaction that streams the first turn's answer
	// after its start committed: mid-stream.
	hooks := &kafka.Hooks{BeforeCommit: func(_ int32, recs []kafka.OutRecord) {
		if kafkatest.MidStream(recs) && killed.CompareAndSwap(false, true) {
			victim.Load().Executor.Kill()
		}
	}}
	victim.Store(e.start("exA", hooks, stack.Executor))
	runID := create(t, front, "slow", "x", "crash-1").RunID
	eventually.Succeeds(t, 10*time.Second, "executor A died mid-stream", func() error {
		if !killed.Load() {
			return context.DeadlineExceeded
		}
		return nil
	})
	e.start("exB", nil, stack.Executor)
	waitStatus(t, front, runID, "completed", 20*time.Second)
	states := e.invariants(front)
	st := states[runID]
	counts := typeCounts(listEvents(t, front, runID))
	if counts[events.RunAccepted] != 1 || counts[events.RunStarted] != 1 || counts[events.RunCompleted] != 1 {
		t.Fatalf("lifecycle events repeated: %v", counts)
	}
	if counts[events.RunCheckpointRestored] != 1 || counts[events.ItemFailed] != 1 {
		t.Fatalf("takeover not recorded as one restore closing one lost item: %v", counts)
	}
	completed := 0
	for it := range st.Items.All() {
		if it.Status == events.ItemStatusCompleted {
			completed++
		}
	}
	if completed != 1 {
		t.Fatalf("%d completed assistant messages, want the one answer (the lost stream repeated)", completed)
	}
}

// TestSameCommandDeliveredTwiceHasOneEffect produces one command record twice
// straight to Kafka: the second is recorded as a duplicate and changes nothing.
func TestSameCommandDeliveredTwiceHasOneEffect(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	st := e.start("all", nil)
	sk := events.SandboxKey{TenantID: tenant, WorkspaceID: "w", AgentID: "demo", OwnerID: "u1"}
	runID := commands.RunIDFor(tenant, "dup-1", sk, int(e.kcfg.Partitions))
	c, err := commands.New(commands.CreateRun, commands.Header{RunID: runID, PlatformSessionID: "s1", TenantID: tenant,
		Actor: events.Actor{Type: "user", ID: "u1"}, IdempotencyKey: "dup-1"},
		commands.CreateRunPayload{AgentID: "demo", Input: events.UserInput{Content: "twice"},
			SandboxKey: sk})
	if err != nil {
		t.Fatal(err)
	}
	e.produceSigned(st, c, 2)
	waitStatus(t, st, runID, "completed", 5*time.Second)
	var counts map[events.Type]int
	eventually.Succeeds(t, 5*time.Second, "duplicate recorded", func() error {
		counts = typeCounts(listEvents(t, st, runID))
		if counts[events.CommandDuplicate] != 1 {
			return context.DeadlineExceeded
		}
		return nil
	})
	if counts[events.RunAccepted] != 1 || counts[events.RunStarted] != 1 || counts[events.RunCompleted] != 1 {
		t.Fatalf("the command took effect more than once: %v", counts)
	}
	e.invariants(st)
}

// produceSigned produces command c to the commands topic n times, signed
// with st's keys as the API signs it, past the API's checks.
func (e *env) produceSigned(st *stack.Stack, c commands.Envelope, n int) {
	e.t.Helper()
	raw, err := json.Marshal(c)
	if err != nil {
		e.t.Fatal(err)
	}
	prod, err := kafka.NewProducer(e.kcfg)
	if err != nil {
		e.t.Fatal(err)
	}
	defer prod.Close()
	topic := e.kcfg.WithDefaults().CommandsTopic()
	for range n {
		if err := prod.ProduceWithHeaders(context.Background(), topic, c.RunID, raw, st.CommandKeys().Sign(c.RunID, raw)); err != nil {
			e.t.Fatal(err)
		}
	}
}
