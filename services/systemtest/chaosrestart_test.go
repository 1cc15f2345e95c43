//go:build chaos

package systemtest_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/infra/devstack/kafkatest"
	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/services/stack"
)

// TestChaosBrokerRestarted stops the (persistent) broker in the middle of a
// workload and starts it again on the same address and data dir: clients
// reconnect, and every run completes once. Each restart has a run in
// flight whatever the machine's speed: a run of the "held" agent waits in
// its tool call until the restart is done.
func TestChaosBrokerRestarted(t *testing.T) {
	t.Parallel()
	kafkatest.RequireFake(t, "the scenario restarting all brokers during a workload (chaosbroker_test.go)")
	cfg := kafka.ClusterConfig{Addr: freeLoopbackAddr(t), DataDir: t.TempDir(), Partitions: 4}
	cl, err := kafka.StartCluster(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		cl.Close()
	})
	c := newFaultChaosOn(t, cl)
	c.stack("ex1", nil, stack.Executor)
	c.stack("ex2", nil, stack.Executor)
	var ids, all []string
	restarts, batch := chaosN(3, 2), chaosN(12, 8)
	for i := range restarts {
		// Restart once a fresh batch has started completing, the rest in flight.
		held := c.createRunsOf("held", fmt.Sprint("held", i), 1)
		ids = append(ids, c.createRuns(fmt.Sprint("restart", i), batch)...)
		all = append(all, held...)
		want := len(ids) - batch + 1
		eventually.Succeeds(t, time.Minute, fmt.Sprintf("%d runs terminal before restart %d", want, i), func() error {
			n, err := c.terminal(context.Background(), ids)
			if err != nil {
				return fmt.Errorf("count terminal runs: %w", err)
			}
			if n < want {
				return fmt.Errorf("%d terminal", n)
			}
			return nil
		})
		n, _ := c.terminal(context.Background(), ids)
		if h, _ := c.terminal(context.Background(), held); h != 0 {
			t.Fatalf("restart %d: the held run ended before it was let go", i)
		}
		t.Logf("restarting the broker with %d of %d runs terminal and a held one in flight", n, len(ids))
		mu.Lock()
		cl.Close()
		cl, err = kafka.StartCluster(cfg)
		mu.Unlock()
		if err != nil {
			t.Fatalf("restart %d: %v", i, err)
		}
		c.release(held)
	}
	all = append(all, ids...)
	c.untilTerminal(all, time.Minute, 50*time.Millisecond, nil)
	c.check(c.front, all)
}
