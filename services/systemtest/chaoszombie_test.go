//go:build chaos

package systemtest_test

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/services/stack"
)

// freezer holds one executor commit, after its records are flushed and
// before it is ended, until released.
type freezer struct {
	armed   atomic.Bool
	part    atomic.Int32
	frozen  chan struct{}
	release chan struct{}
}

func (f *freezer) hooks() *kafka.Hooks {
	return &kafka.Hooks{BeforeCommit: func(p int32, _ []kafka.OutRecord) {
		if !f.armed.CompareAndSwap(true, false) {
			return
		}
		f.part.Store(p)
		close(f.frozen)
		<-f.release
	}}
}

// TestChaosZombieExecutorFenced freezes executor A in the middle of a
// transaction, makes the group expire it (its heartbeats fail) so executor B
// takes its partitions, then lets A commit: the commit is fenced, nothing of
// A's transaction lands, and every run completes once.
func TestChaosZombieExecutorFenced(t *testing.T) {
	t.Parallel()
	c := newFaultChaos(t, "a zombie's commit refused after takeover: infra/kafka's TestZombieOwnerIsFencedByNewOwner and "+
		"TestZombieTransactionOpenDuringTakeoverNeverCommits; an expired group member: the frozen-broker scenario (chaosbroker_test.go)")
	f := &freezer{frozen: make(chan struct{}), release: make(chan struct{})}
	exA := c.stack("exA", f.hooks(), stack.Executor)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	info, err := c.fake.WaitGroupStable(ctx, kafka.DefaultExecutorGroup, 1)
	if err != nil {
		t.Fatal(err)
	}
	memberA := info.Members[0].MemberID
	f.armed.Store(true)
	ids := c.createRuns("zombie", chaosN(16, 8))
	select {
	case <-f.frozen:
	case <-ctx.Done():
		t.Fatal("executor A never committed")
	}
	p := f.part.Load()
	t.Logf("executor A frozen before committing partition %d", p)
	c.fake.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Heartbeat}, Group: kafka.DefaultExecutorGroup, Count: -1, Err: kerr.UnknownServerError,
		When: func(r kmsg.Request) bool { return r.(*kmsg.HeartbeatRequest).MemberID == memberA }})
	exB := c.stack("exB", nil, stack.Executor)
	eventually.Succeeds(t, 30*time.Second, "executor B owns partition "+fmt.Sprint(p), func() error {
		if !slices.Contains(exB.Executor.Partitions(), p) {
			return fmt.Errorf("B owns %v", exB.Executor.Partitions())
		}
		return nil
	})
	close(f.release)
	eventually.Succeeds(t, 10*time.Second, "executor A's commit refused", func() error {
		if c.logged("exA", "append failed; partition given up", "/"+fmt.Sprint(p)+":") == 0 {
			return fmt.Errorf("no failed append of partition %d logged by A", p)
		}
		return nil
	})
	if n := len(exA.Executor.Partitions()); n > 0 {
		t.Logf("executor A owns %d partitions again after its session restarted", n)
	}
	c.untilTerminal(ids, time.Minute, 50*time.Millisecond, nil)
	c.check(c.front, ids)
}
