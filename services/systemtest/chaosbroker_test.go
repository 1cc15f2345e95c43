//go:build chaos

package systemtest_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/services/stack"
)

// TestChaosBrokerLeaderKilled kills (SIGKILL) the broker leading the
// partitions that hold most runs while runs with tool calls are in flight:
// the executors' transactions and the projector's reads move to the new
// leaders, runs created after the kill go through, and every run completes
// once. A run of the "held" agent is in its tool call at the kill and goes
// on after it. The broker comes back before the checks, as an operator
// would bring it back.
func TestChaosBrokerLeaderKilled(t *testing.T) {
	t.Parallel()
	c := newBrokerChaos(t)
	c.stack("ex1", nil, stack.Executor)
	c.stack("ex2", nil, stack.Executor)
	batch := chaosN(30, 12)
	ids := c.createRunsOf("held", "leader-held", 1)
	ids = append(ids, c.createRuns("leader-before", batch)...)
	c.untilSomeTerminal(ids, 1)
	victim := c.busiestLeader(ids)
	if c.midFlight(fmt.Sprintf("killing broker %d", c.kafka.NodeID(victim)), ids) == 0 {
		t.Error("the workload was done before the kill: the scenario proves nothing")
	}
	killed := time.Now()
	if err := c.kafka.Kill(victim); err != nil {
		t.Fatal(err)
	}
	c.release(ids[:1])
	ids = append(ids, c.createRuns("leader-after", batch)...)
	c.untilTerminal(ids, 3*time.Minute, 100*time.Millisecond, nil)
	t.Logf("figure: every run terminal %s after the leader was killed", time.Since(killed).Round(time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), brokerStartTimeout)
	defer cancel()
	if err := c.kafka.Start(ctx, victim); err != nil {
		t.Fatal(err)
	}
	c.check(c.front, ids)
}

// coordKiller kills, from inside an executor's commit (the transaction's
// records are flushed, EndTxn is not sent yet), the broker coordinating that
// partition's transactions.
type coordKiller struct {
	c     *brokerChaos
	armed atomic.Bool
	hit   chan coordKill

	mu     sync.Mutex
	last   coordKill // the latest kill, until its partition commits again
	killed time.Time
	took   []time.Duration // from each kill to its partition's next commit
}

// coordKill is one kill: of which broker, in the commit of which partition.
type coordKill struct {
	part int32
	node int
	err  error
}

func (k *coordKiller) hooks() *kafka.Hooks {
	return &kafka.Hooks{BeforeCommit: func(p int32, _ []kafka.OutRecord) {
		k.nextCommit(p)
		if !k.armed.CompareAndSwap(true, false) {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		node, err := k.c.txnCoordinator(ctx, p)
		if err == nil {
			err = k.c.kafka.Kill(node)
		}
		kill := coordKill{part: p, node: node, err: err}
		k.mu.Lock()
		k.last, k.killed = kill, time.Now()
		k.mu.Unlock()
		k.hit <- kill
	}}
}

// nextCommit notes how long after the latest kill the partition it hit
// began its next commit: the commit the coordinator died in has ended then.
func (k *coordKiller) nextCommit(p int32) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.killed.IsZero() && k.last.part == p {
		k.took = append(k.took, time.Since(k.killed))
		k.killed = time.Time{}
	}
}

// TestChaosBrokerTxnCoordinatorKilled kills the broker coordinating an
// executor partition's transactions in the middle of that partition's
// commit, again after the broker is back: the commit's outcome is decided by
// the coordinator that takes over (from the replicated transaction log), the
// executor either learns it or gives the partition up, and every run
// completes once. Each round's run of the "held" agent waits in its tool
// call until the killed broker is back.
func TestChaosBrokerTxnCoordinatorKilled(t *testing.T) {
	t.Parallel()
	c := newBrokerChaos(t)
	k := &coordKiller{c: c, hit: make(chan coordKill, 1)}
	c.stack("ex1", k.hooks(), stack.Executor)
	c.stack("ex2", k.hooks(), stack.Executor)
	batch, kills := chaosN(16, 10), chaosN(3, 1)
	var ids []string
	midFlight := 0
	for i := range kills {
		held := c.createRunsOf("held", fmt.Sprint("coord-held", i), 1)
		ids = append(ids, c.createRuns(fmt.Sprint("coord", i), batch)...)
		c.untilSomeTerminal(ids, len(ids)-batch+1)
		ids = append(ids, held...)
		k.armed.Store(true)
		hit := c.awaitKill(k, &ids, i)
		if hit.err != nil {
			t.Fatalf("kill the coordinator of partition %d: %v", hit.part, hit.err)
		}
		if c.midFlight(fmt.Sprintf("killed broker %d, the transaction coordinator of partition %d, mid-commit",
			c.kafka.NodeID(hit.node), hit.part), ids) > 0 {
			midFlight++
		}
		ctx, cancel := context.WithTimeout(context.Background(), brokerStartTimeout)
		err := c.kafka.Start(ctx, hit.node)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		c.release(held)
		c.untilFullyReplicated()
	}
	if midFlight == 0 {
		t.Error("every kill found the workload done: the scenario proves nothing")
	}
	c.untilTerminal(ids, 3*time.Minute, 100*time.Millisecond, nil)
	k.mu.Lock()
	t.Logf("figure: from a coordinator's kill to its partition's next commit: %v", k.took)
	k.mu.Unlock()
	c.check(c.front, ids)
}

// awaitKill waits for the armed kill. Commits come every few milliseconds
// while runs are in flight, but the batch may have ended before the kill was
// armed: then a few more runs are created (and added to ids) to make the
// commit the kill waits for.
func (c *brokerChaos) awaitKill(k *coordKiller, ids *[]string, round int) coordKill {
	c.t.Helper()
	for more := range 8 {
		select {
		case hit := <-k.hit:
			return hit
		case <-time.After(15 * time.Second):
			*ids = append(*ids, c.createRuns(fmt.Sprintf("coord%d-more%d-", round, more), 2)...)
		}
	}
	c.t.Fatal("no executor committed after the kill was armed, with more runs created to make commits")
	return coordKill{}
}

// TestChaosBrokerAllRestarted crashes every broker at once (SIGKILL) while
// runs are in flight and starts them again on the same ports and data:
// executors, projector and API reconnect, and every run completes once.
// Each round's run of the "held" agent waits in its tool call until the
// brokers are back.
func TestChaosBrokerAllRestarted(t *testing.T) {
	t.Parallel()
	c := newBrokerChaos(t)
	c.stack("ex1", nil, stack.Executor)
	c.stack("ex2", nil, stack.Executor)
	batch, restarts := chaosN(16, 10), chaosN(2, 1)
	var ids []string
	midFlight := 0
	for i := range restarts {
		held := c.createRunsOf("held", fmt.Sprint("all-held", i), 1)
		ids = append(ids, c.createRuns(fmt.Sprint("all", i), batch)...)
		c.untilSomeTerminal(ids, len(ids)-batch+1)
		ids = append(ids, held...)
		if c.midFlight("crashing every broker", ids) > 0 {
			midFlight++
		}
		down := time.Now()
		for n := range 3 {
			if err := c.kafka.Kill(n); err != nil {
				t.Fatal(err)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), brokerStartTimeout)
		err := c.kafka.StartAll(ctx)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("figure: cluster down to serving again in %s", time.Since(down).Round(time.Millisecond))
		c.release(held)
	}
	if midFlight == 0 {
		t.Error("every restart found the workload done: the scenario proves nothing")
	}
	ids = append(ids, c.createRuns("all-after", batch)...)
	c.untilTerminal(ids, 3*time.Minute, 100*time.Millisecond, nil)
	c.check(c.front, ids)
}

// brokerFrozenFor is the least time a broker stays frozen: longer than the
// executors' group session timeout (10 s, kafka.OwnerConfig) and the
// brokers' session with the controller (6 s), so both expire.
const brokerFrozenFor = 15 * time.Second

// TestChaosBrokerFrozen freezes (SIGSTOP) the broker coordinating the
// executors' consumer group while runs are in flight, keeps it frozen until
// the others have fenced it and moved the group's coordinator away, creates
// runs meanwhile, then lets it run again (SIGCONT): it wakes up with stale
// leaderships and connections, and every run completes once. A run of the
// "held" agent waits in its tool call until the broker runs again.
func TestChaosBrokerFrozen(t *testing.T) {
	t.Parallel()
	c := newBrokerChaos(t)
	c.stack("ex1", nil, stack.Executor)
	c.stack("ex2", nil, stack.Executor)
	batch := chaosN(24, 12)
	ids := c.createRunsOf("held", "frozen-held", 1)
	ids = append(ids, c.createRuns("frozen-before", batch)...)
	c.untilSomeTerminal(ids, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	victim, err := c.groupCoordinator(ctx, kafka.DefaultExecutorGroup, -1)
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	if c.midFlight(fmt.Sprintf("freezing broker %d, the executors' group coordinator", c.kafka.NodeID(victim)), ids) == 0 {
		t.Error("the workload was done before the freeze: the scenario proves nothing")
	}
	if err := c.kafka.Pause(victim); err != nil {
		t.Fatal(err)
	}
	frozen := time.Now()
	ids = append(ids, c.createRuns("frozen-during", batch)...)
	t.Logf("%d runs created in %s with broker %d frozen", batch, time.Since(frozen).Round(time.Millisecond), c.kafka.NodeID(victim))
	c.untilFenced(victim, frozen)
	t.Logf("broker %d resumed after %s frozen", c.kafka.NodeID(victim), time.Since(frozen).Round(time.Millisecond))
	if err := c.kafka.Resume(victim); err != nil {
		t.Fatal(err)
	}
	c.release(ids[:1])
	c.untilTerminal(ids, 3*time.Minute, 100*time.Millisecond, nil)
	c.check(c.front, ids)
}
