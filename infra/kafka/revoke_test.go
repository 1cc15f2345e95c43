package kafka_test

import (
	"context"
	"sync"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/infra/devstack/kafkatest"
	"github.com/xbot-runtime/xbot/infra/kafka"
)

// cancelOnRevoke is a recorder whose Revoked plays the executor stopping a
// partition in the middle of an append: the append runs with the partition
// worker's context, cancelled by the revoke.
type cancelOnRevoke struct {
	*recorder
	mu       sync.Mutex
	assigned map[int32]int
	cutShort map[int32]error
}

func (h *cancelOnRevoke) Assigned(ctx context.Context, p *kafka.Partition, replay func(func(kafka.Record) error) error) error {
	h.mu.Lock()
	h.assigned[p.ID()]++
	h.mu.Unlock()
	return h.recorder.Assigned(ctx, p, replay)
}

func (h *cancelOnRevoke) Revoked(p int32) {
	h.recorder.mu.Lock()
	part := h.parts[p]
	h.recorder.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := part.Append(ctx, out("run_r", "cut short"), -1)
	h.mu.Lock()
	h.cutShort[p] = err
	h.mu.Unlock()
	h.recorder.Revoked(p)
}

// An append cut short because its partition is being revoked gives up that
// partition only: the owner keeps its session and the partitions it keeps,
// and the rebalance ends with one partition each.
func TestAppendCutShortByItsRevokeKeepsTheSession(t *testing.T) {
	t.Parallel()
	kc := kafkatest.NewTopics(t, 2)
	group, txn := kafkatest.UniqueName(t), kafkatest.UniqueName(t)
	core, logs := observer.New(zapcore.WarnLevel)
	cfgA := ownerConfig(t, kc, group, txn, "a")
	cfgA.Logger = zap.New(core)
	ha := &cancelOnRevoke{recorder: newRecorder(), assigned: map[int32]int{}, cutShort: map[int32]error{}}
	a, _ := startOwner(t, cfgA, ha)
	eventually.Holds(t, waitTimeout, "owner A to own both partitions", func() bool { return len(a.Assigned()) == 2 })

	b, _ := startOwner(t, ownerConfig(t, kc, group, txn, "b"), newRecorder())
	eventually.Holds(t, waitTimeout, "one partition each", func() bool { return len(a.Assigned()) == 1 && len(b.Assigned()) == 1 })
	moved, kept := b.Assigned()[0], a.Assigned()[0]
	ha.mu.Lock()
	cut, assignedKept := ha.cutShort[moved], ha.assigned[kept]
	ha.mu.Unlock()
	if cut == nil {
		t.Fatal("test setup: the append cut short by the revoke committed")
	}
	if n := logs.FilterMessage("partition writer failed; giving up all partitions").Len(); n > 0 {
		t.Errorf("the append cut short by its revoke (%v) gave up all partitions", cut)
	}
	if assignedKept != 1 {
		t.Errorf("the kept partition %d was assigned to A %d times, want once (no session restart)", kept, assignedKept)
	}
	mustAppend(t, ha.partition(t, kept), -1, out("run_k", "k1"))
}
