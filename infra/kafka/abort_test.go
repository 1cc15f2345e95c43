package kafka_test

import (
	"sync/atomic"
	"testing"

	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/infra/devstack/kafkatest"
	"github.com/xbot-runtime/xbot/infra/kafka"
)

// An owner that dies between flushing a transaction's records and ending it
// leaves an open transaction; the next owner's initialisation aborts it, and
// no reader ever sees its records or its command offset.
func TestTransactionOfKilledOwnerIsInvisible(t *testing.T) {
	t.Parallel()
	kc := kafkatest.NewTopics(t, 2)
	const p = int32(1)
	group, txn := kafkatest.UniqueName(t), kafkatest.UniqueName(t)
	var (
		owner atomic.Pointer[kafka.Owner]
		armed atomic.Bool
	)
	cfgA := ownerConfig(t, kc, group, txn, "a")
	cfgA.Hooks = &kafka.Hooks{BeforeCommit: func(part int32, _ []kafka.OutRecord) {
		if part == p && armed.Load() {
			owner.Load().Kill()
		}
	}}
	ha := newRecorder()
	a, stopA := startOwner(t, cfgA, ha)
	owner.Store(a)
	eventually.Holds(t, waitTimeout, "owner A to own every partition", func() bool { return len(a.Assigned()) == 2 })
	part := ha.partition(t, p)
	mustAppend(t, part, 5, out("run_k", "c1", "c2"))

	armed.Store(true)
	if err := part.Append(testCtx(t), out("run_k", "x1", "x2"), 9); err == nil {
		t.Fatal("append of an owner killed before its commit reported success")
	}
	stopA()
	if end, stable := logEnds(t, kc, kc.EventsTopic(), p); end <= stable {
		t.Fatalf("test setup: the killed transaction's records should be in the log past the stable offset (end %d, stable %d)", end, stable)
	}
	got, maxCmd := committedSoFar(t, kc, kc.EventsTopic(), p)
	equal(t, "committed events with the dead owner's transaction open", got, []string{"c1", "c2"})
	if maxCmd != 5 {
		t.Fatalf("command offset = %d, want 5", maxCmd)
	}

	hb := newRecorder()
	b, _ := startOwner(t, ownerConfig(t, kc, group, txn, "b"), hb)
	eventually.Holds(t, waitTimeout, "owner B to own the partition", func() bool { return owns(b, p) })
	equal(t, "B's replay", hb.replay(p), []string{"c1", "c2"})
	mustAppend(t, hb.partition(t, p), 6, out("run_k", "c3"))
	got, maxCmd = committed(t, kc, kc.EventsTopic(), p)
	equal(t, "committed events", got, []string{"c1", "c2", "c3"})
	if maxCmd != 6 {
		t.Fatalf("command offset = %d, want 6 (the aborted 9 must not count)", maxCmd)
	}
}
