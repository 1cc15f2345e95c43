//go:build chaos

package systemtest_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/services/stack"
)

// newRand returns a seeded source and logs the seed, so a failing schedule
// can be replayed by pinning it.
func newRand(t *testing.T) *rand.Rand {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	t.Logf("chaos seed %d", seed)
	return rand.New(rand.NewPCG(seed, seed>>1))
}

// killer kills executors between flushing a transaction and ending it, at
// pseudo-random commits, until it has killed max of them.
type killer struct {
	mu      sync.Mutex
	rng     *rand.Rand
	commits int
	next    int
	killed  int
	max     int
	died    chan string
}

// hooks returns the Kafka hooks of one executor; self is set once it started.
func (k *killer) hooks(name string, self *atomic.Pointer[stack.Stack]) *kafka.Hooks {
	var dead atomic.Bool
	return &kafka.Hooks{BeforeCommit: func(int32, []kafka.OutRecord) {
		k.mu.Lock()
		k.commits++
		hit := self.Load() != nil && !dead.Load() && k.killed < k.max && k.commits >= k.next
		if hit {
			dead.Store(true)
			k.killed++
			k.next = k.commits + 5 + k.rng.IntN(40) // a few transactions to a few dozen apart
		}
		k.mu.Unlock()
		if hit {
			self.Load().Executor.Kill()
			k.died <- name
		}
	}}
}

// TestChaosExecutorsKilledMidTransaction kills executors mid-transaction
// again and again while runs with tool calls are in flight, starting a fresh
// executor for each one killed.
func TestChaosExecutorsKilledMidTransaction(t *testing.T) {
	t.Parallel()
	c := newChaos(t)
	kills := chaosN(8, 4)
	k := &killer{rng: newRand(t), next: 10, max: kills, died: make(chan string, kills)}
	started := 0
	startOne := func() {
		started++
		var self atomic.Pointer[stack.Stack]
		name := fmt.Sprintf("ex%d", started)
		self.Store(c.stack(name, k.hooks(name, &self), stack.Executor))
	}
	startOne()
	startOne()
	ids := c.createRuns("kill", chaosN(50, 20))
	c.untilTerminal(ids, 3*time.Minute, 50*time.Millisecond, func() {
		for {
			select {
			case name := <-k.died:
				t.Logf("%s killed mid-transaction; starting a replacement", name)
				startOne()
			default:
				return
			}
		}
	})
	k.mu.Lock()
	t.Logf("%d executors killed at pseudo-random commits out of %d", k.killed, k.commits)
	k.mu.Unlock()
	if k.killed == 0 {
		t.Error("no executor was killed: the scenario proves nothing")
	}
	c.check(c.front, ids)
}

// TestChaosExecutorChurn starts, stops and kills executors at random while
// runs with tool calls are in flight; one executor is always left.
func TestChaosExecutorChurn(t *testing.T) {
	t.Parallel()
	c := newChaos(t)
	rng := newRand(t)
	var live []*stack.Stack
	started, stops, kills := 0, 0, 0
	startOne := func() {
		started++
		live = append(live, c.stack(fmt.Sprintf("ex%d", started), nil, stack.Executor))
	}
	startOne()
	startOne()
	ids := c.createRuns("churn", chaosN(200, 40))
	c.untilTerminal(ids, 4*time.Minute, chaosDuration(400*time.Millisecond, 250*time.Millisecond), func() {
		switch a := rng.IntN(3); {
		case a == 0 && len(live) < 4 || len(live) < 2:
			startOne()
		case a == 1:
			i := rng.IntN(len(live))
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			live[i].Stop(ctx)
			cancel()
			live, stops = append(live[:i], live[i+1:]...), stops+1
		case a == 2:
			i := rng.IntN(len(live))
			live[i].Executor.Kill()
			live, kills = append(live[:i], live[i+1:]...), kills+1
		}
	})
	t.Logf("churn: %d executors started, %d stopped, %d killed", started, stops, kills)
	c.check(c.front, ids)
}

// chaosDuration picks the full value, or the CI value under -short.
func chaosDuration(full, short time.Duration) time.Duration {
	if testing.Short() {
		return short
	}
	return full
}
