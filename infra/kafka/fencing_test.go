package kafka_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/infra/devstack/kafkatest"
	"github.com/xbot-runtime/xbot/infra/kafka"
)

// A partition handed over after its owner crashed: the old owner's Partition
// must refuse to append, and the new owner replays exactly what committed.
func TestStalePartitionCannotAppendAfterTakeover(t *testing.T) {
	t.Parallel()
	kc := kafkatest.NewTopics(t, 3)
	group, txn := kafkatest.UniqueName(t), kafkatest.UniqueName(t)
	const p = int32(1)

	ha := newRecorder()
	a, _ := startOwner(t, ownerConfig(t, kc, group, txn, "a"), ha)
	eventually.Holds(t, waitTimeout, "owner A to own every partition", func() bool { return len(a.Assigned()) == 3 })
	stale := ha.partition(t, p)
	mustAppend(t, stale, 0, out("run_a", "a1"))
	mustAppend(t, stale, 1, out("run_a", "a2", "a3"))

	a.Kill()
	hb := newRecorder()
	b, _ := startOwner(t, ownerConfig(t, kc, group, txn, "b"), hb)
	eventually.Holds(t, waitTimeout, "owner B to own partition 1", func() bool { return owns(b, p) })

	if err := stale.Append(testCtx(t), out("run_a", "zombie"), 2); err == nil {
		t.Fatal("append through the dead owner's partition succeeded")
	}
	equal(t, "B's replay", hb.replay(p), []string{"a1", "a2", "a3"})
	got, maxCmd := committed(t, kc, kc.EventsTopic(), p)
	equal(t, "committed events", got, []string{"a1", "a2", "a3"})
	if maxCmd != 1 {
		t.Fatalf("command offset = %d, want 1", maxCmd)
	}
	mustAppend(t, hb.partition(t, p), 2, out("run_a", "b1"))
	got, _ = committed(t, kc, kc.EventsTopic(), p)
	equal(t, "committed events after B appended", got, []string{"a1", "a2", "a3", "b1"})
}

// zombiePair starts owner A and, once A owns every partition and committed
// "a1" to partition p, owner B with the same transactional ids in another
// group: both group sessions stay healthy and both believe they own p, which
// is the situation of an executor expired by the broker that has not noticed.
// A never restarts by itself (its backoff is an hour), so it cannot fence B back.
func zombiePair(t *testing.T, kc kafka.Config, p int32, hooks *kafka.Hooks) (a *kafka.Owner, ha *recorder, takeOver func() (*kafka.Owner, *recorder)) {
	t.Helper()
	txn := kafkatest.UniqueName(t)
	cfgA := ownerConfig(t, kc, kafkatest.UniqueName(t), txn, "a")
	cfgA.RestartBackoff, cfgA.Hooks = time.Hour, hooks
	ha = newRecorder()
	a, _ = startOwner(t, cfgA, ha)
	eventually.Holds(t, waitTimeout, "owner A to own every partition", func() bool { return len(a.Assigned()) == int(kc.Partitions) })
	mustAppend(t, ha.partition(t, p), 0, out("run_z", "a1"))
	takeOver = func() (*kafka.Owner, *recorder) {
		hb := newRecorder()
		b, _ := startOwner(t, ownerConfig(t, kc, kafkatest.UniqueName(t), txn, "b"), hb)
		eventually.Holds(t, waitTimeout, "owner B to own the partition", func() bool { return owns(b, p) })
		return b, hb
	}
	return a, ha, takeOver
}

func TestZombieOwnerIsFencedByNewOwner(t *testing.T) {
	t.Parallel()
	kc := kafkatest.NewTopics(t, 3)
	const p = int32(2)
	a, ha, takeOver := zombiePair(t, kc, p, nil)
	zombie := ha.partition(t, p)
	_, hb := takeOver()
	if !owns(a, p) {
		t.Fatal("test setup: A should still believe it owns the partition")
	}

	err := zombie.Append(testCtx(t), out("run_z", "zombie"), 1)
	if err == nil {
		t.Fatal("the zombie's append committed after another owner initialised the partition's producer")
	}
	t.Logf("zombie append: %v", err)
	if errors.Is(err, kafka.ErrPartitionLost) {
		t.Fatalf("the zombie's first append should fail on the broker's fencing, got %v", err)
	}
	if err := zombie.Append(testCtx(t), out("run_z", "zombie2"), 2); !errors.Is(err, kafka.ErrPartitionLost) {
		t.Fatalf("append after a failed append = %v, want ErrPartitionLost", err)
	}
	equal(t, "B's replay", hb.replay(p), []string{"a1"})
	got, _ := committed(t, kc, kc.EventsTopic(), p)
	equal(t, "committed events", got, []string{"a1"})

	mustAppend(t, hb.partition(t, p), 1, out("run_z", "b1"))
	got, maxCmd := committed(t, kc, kc.EventsTopic(), p)
	equal(t, "committed events after B appended", got, []string{"a1", "b1"})
	if maxCmd != 1 {
		t.Fatalf("command offset = %d, want 1", maxCmd)
	}
}

// The new owner initialises while the zombie's transaction is open (records
// flushed, not yet committed): the open transaction is aborted and the
// zombie's commit fails.
func TestZombieTransactionOpenDuringTakeoverNeverCommits(t *testing.T) {
	t.Parallel()
	kc := kafkatest.NewTopics(t, 2)
	const p = int32(0)
	flushed, resume := make(chan struct{}), make(chan struct{})
	armed := make(chan struct{}, 1)
	hooks := &kafka.Hooks{BeforeCommit: func(part int32, _ []kafka.OutRecord) {
		if part != p {
			return
		}
		select {
		case <-armed:
			close(flushed)
			<-resume
		default:
		}
	}}
	_, ha, takeOver := zombiePair(t, kc, p, hooks)
	zombie := ha.partition(t, p)

	armed <- struct{}{}
	appendErr := make(chan error, 1)
	go func() { appendErr <- zombie.Append(testCtx(t), out("run_z", "zombie1", "zombie2"), 5) }()
	released := false
	release := func() {
		if !released {
			released = true
			close(resume)
		}
	}
	t.Cleanup(release)
	<-flushed

	got, _ := committedSoFar(t, kc, kc.EventsTopic(), p)
	equal(t, "committed events while the zombie's transaction is open", got, []string{"a1"})
	_, hb := takeOver()
	release()
	err := <-appendErr
	if err == nil {
		t.Fatal("the zombie committed a transaction that was open when the new owner initialised")
	}
	t.Logf("zombie commit: %v", err)
	equal(t, "B's replay", hb.replay(p), []string{"a1"})
	mustAppend(t, hb.partition(t, p), 1, out("run_z", "b1"))
	got, maxCmd := committed(t, kc, kc.EventsTopic(), p)
	equal(t, "committed events", got, []string{"a1", "b1"})
	if maxCmd != 1 {
		t.Fatalf("command offset = %d, want 1 (the zombie's 5 never committed)", maxCmd)
	}
}

// Kill plays a crash: the handler is not told that its partitions were
// revoked (Kill's documented contract), as a crashed process would not be.
func TestKillDoesNotRevokeFromHandler(t *testing.T) {
	t.Parallel()
	kc := kafkatest.NewTopics(t, 2)
	h := newRecorder()
	o, stop := startOwner(t, ownerConfig(t, kc, kafkatest.UniqueName(t), kafkatest.UniqueName(t), "a"), h)
	eventually.Holds(t, waitTimeout, "the owner to own every partition", func() bool { return len(o.Assigned()) == 2 })
	o.Kill()
	stop() // waits for Run to return, after the session is torn down
	if n := h.revokedCount(); n != 0 {
		t.Fatalf("Kill revoked %d partitions from the handler; a crash revokes none", n)
	}
}

// slowHandler keeps partition slow's Assigned going, after its replay, until
// release is closed and then for one more round trip to the broker, as a
// rebuild of a long log would.
type slowHandler struct {
	*recorder
	kc      kafka.Config
	slow    int32
	release chan struct{}
}

func (h slowHandler) Assigned(ctx context.Context, p *kafka.Partition, replay func(func(kafka.Record) error) error) error {
	if err := h.recorder.Assigned(ctx, p, replay); err != nil || p.ID() != h.slow {
		return err
	}
	<-h.release
	// Not ctx: Kill cancels it, and this rebuild must outlive the Kill.
	_, err := kafka.ReadPartition(context.Background(), h.kc, h.kc.EventsTopic(), p.ID(), func(kafka.Record) error { return nil })
	return err
}

// Kill may come while another partition is still being taken. Kill must not
// touch the owner's partition map outside its lock (-race reports it), and
// the partition taken during the Kill must not stay writable.
//
// Not parallel: the race detector fails every test running when it reports,
// and this test should be the only one blamed.
func TestKillDuringAssignment(t *testing.T) {
	kc := kafkatest.NewTopics(t, 2)
	h := slowHandler{recorder: newRecorder(), kc: kc, slow: 0, release: make(chan struct{})}
	o, stop := startOwner(t, ownerConfig(t, kc, kafkatest.UniqueName(t), kafkatest.UniqueName(t), "a"), h)
	eventually.Holds(t, waitTimeout, "the owner to own partition 1", func() bool { return owns(o, 1) })
	eventually.Holds(t, waitTimeout, "partition 0 to be replayed", func() bool { return h.has(0) })
	close(h.release)
	o.Kill()
	stop()
	if err := h.partition(t, 0).Append(testCtx(t), out("run_g", "late"), -1); err == nil {
		t.Fatal("a partition taken while the owner was killed still appends")
	}
}
