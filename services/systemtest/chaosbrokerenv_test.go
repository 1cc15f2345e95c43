//go:build chaos

package systemtest_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/xbot-runtime/xbot/infra/devstack"
	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/infra/kafka/partition"
)

// brokerChaosEnv selects the broker of the Kafka-using suites; the broker
// chaos scenarios run only when it is "apache", as each starts three JVMs.
const brokerChaosEnv = "XBOT_TEST_KAFKA"

// brokerPartitions is the partition count of the scenarios' topics, as the
// kfake chaos suite has: with 3 brokers one of them leads two partitions.
const brokerPartitions = 4

// brokerStartTimeout bounds starting a 3-broker cluster: ~10 s here, several
// times that on a loaded 2-core machine running other tests.
const brokerStartTimeout = 3 * time.Minute

// brokerChaos is a chaos system on a 3-broker Apache Kafka cluster of its own
// (replication factor 3, min.insync.replicas 2), which the scenario may kill,
// restart and freeze.
type brokerChaos struct {
	*chaos
	kafka *devstack.ApacheKafka
	adm   *kadm.Client
}

// newBrokerChaos starts the cluster, creates xbot's topics on it with
// replication factor 3, and starts the system of newChaos on them. It skips
// the test unless XBOT_TEST_KAFKA is "apache".
func newBrokerChaos(t *testing.T) *brokerChaos {
	t.Helper()
	if os.Getenv(brokerChaosEnv) != "apache" {
		t.Skip("set " + brokerChaosEnv + "=apache to run the broker chaos scenarios on a real Apache Kafka cluster")
	}
	ctx, cancel := context.WithTimeout(context.Background(), brokerStartTimeout)
	defer cancel()
	k, err := devstack.StartApacheKafka(ctx, devstack.ApacheKafkaConfig{Dir: t.TempDir(), Brokers: 3,
		Partitions: brokerPartitions, Logger: zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := k.Close(); err != nil {
			t.Errorf("close kafka: %v", err)
		}
	})
	kcfg := kafka.Config{Brokers: k.Addrs(), Partitions: brokerPartitions, ReplicationFactor: 3}
	if err := kafka.EnsureTopics(ctx, kcfg); err != nil {
		t.Fatal(err)
	}
	cl, err := kafka.NewClient(kcfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return &brokerChaos{chaos: newChaosIn(newEnvOn(t, kcfg)), kafka: k, adm: kadm.NewClient(cl)}
}

// node returns the index (for Kill, Pause, …) of the broker with node.id
// id, or -1.
func (b *brokerChaos) node(id int32) int {
	for i := range 3 {
		if b.kafka.NodeID(i) == id {
			return i
		}
	}
	return -1
}

// busiestLeader returns the index of the broker leading the partitions of
// the commands and events topics that hold most of the runs ids.
func (b *brokerChaos) busiestLeader(ids []string) int {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	topics := []string{b.kcfg.CommandsTopic(), b.kcfg.EventsTopic()}
	md, err := b.adm.Metadata(ctx, topics...)
	if err != nil {
		b.t.Fatal(err)
	}
	runs := map[int32]int{}
	for _, id := range ids {
		runs[partition.For(id, brokerPartitions)]++
	}
	load := map[int32]int{}
	for _, topic := range topics {
		for p, d := range md.Topics[topic].Partitions {
			load[d.Leader] += runs[p]
		}
	}
	best := int32(-1)
	for id, n := range load {
		if best < 0 || n > load[best] || n == load[best] && id < best {
			best = id
		}
	}
	b.t.Logf("runs per partition %v; runs led per broker %v", runs, load)
	if b.node(best) < 0 {
		b.t.Fatalf("the busiest leader %d is no broker of the cluster", best)
	}
	return b.node(best)
}

// txnCoordinator returns the index of the broker coordinating the
// transactions of partition p's executor writer.
func (b *brokerChaos) txnCoordinator(ctx context.Context, p int32) (int, error) {
	txnID := kafka.TransactionalID(kafka.DefaultExecutorGroup, p)
	r, ok := b.adm.FindTxnCoordinators(ctx, txnID)[txnID]
	switch {
	case !ok:
		return -1, fmt.Errorf("find the coordinator of %s: no answer", txnID)
	case r.Err != nil:
		return -1, fmt.Errorf("find the coordinator of %s: %w", txnID, r.Err)
	}
	return b.node(r.NodeID), nil
}

// clientWithout returns a client that knows every broker but the one at
// index skip (a frozen broker answers nothing); the caller closes it.
func (b *brokerChaos) clientWithout(skip int) (*kgo.Client, error) {
	var seeds []string
	for i, a := range b.kafka.Addrs() {
		if i != skip {
			seeds = append(seeds, a)
		}
	}
	return kgo.NewClient(kgo.SeedBrokers(seeds...))
}

// groupCoordinator returns the index of the broker coordinating group,
// asking only the brokers other than skip (a frozen broker answers nothing).
func (b *brokerChaos) groupCoordinator(ctx context.Context, group string, skip int) (int, error) {
	cl, err := b.clientWithout(skip)
	if err != nil {
		return -1, err
	}
	defer cl.Close()
	r, ok := kadm.NewClient(cl).FindGroupCoordinators(ctx, group)[group]
	switch {
	case !ok:
		return -1, fmt.Errorf("find the coordinator of group %s: no answer", group)
	case r.Err != nil:
		return -1, fmt.Errorf("find the coordinator of group %s: %w", group, r.Err)
	}
	return b.node(r.NodeID), nil
}

// listed returns the node ids of the brokers the cluster lists now, asking
// the brokers other than skip.
func (b *brokerChaos) listed(ctx context.Context, skip int) ([]int32, error) {
	cl, err := b.clientWithout(skip)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	md, err := kadm.NewClient(cl).BrokerMetadata(ctx)
	if err != nil {
		return nil, err
	}
	ids := md.Brokers.NodeIDs()
	slices.Sort(ids)
	return ids, nil
}

// untilSomeTerminal waits until at least n of ids are terminal: the
// workload is under way.
func (b *brokerChaos) untilSomeTerminal(ids []string, n int) {
	b.t.Helper()
	eventually.Succeeds(b.t, 2*time.Minute, fmt.Sprintf("%d of %d runs terminal", n, len(ids)), func() error {
		got, err := b.terminal(context.Background(), ids)
		if err != nil {
			return err
		}
		if got < n {
			return fmt.Errorf("%d terminal", got)
		}
		return nil
	})
}

// midFlight reports how many of ids are not terminal yet, and logs it.
func (b *brokerChaos) midFlight(what string, ids []string) int {
	b.t.Helper()
	n, err := b.terminal(context.Background(), ids)
	if err != nil {
		b.t.Fatal(err)
	}
	b.t.Logf("%s with %d of %d runs terminal", what, n, len(ids))
	return len(ids) - n
}

// untilFullyReplicated waits until every partition of xbot's topics and of
// the transaction log has all three brokers in sync: a broker started again
// has caught up, so killing another one leaves two replicas of everything.
func (b *brokerChaos) untilFullyReplicated() {
	b.t.Helper()
	topics := []string{b.kcfg.CommandsTopic(), b.kcfg.EventsTopic(), b.kcfg.DeadLetterTopic(), "__transaction_state", "__consumer_offsets"}
	eventually.Succeeds(b.t, 2*time.Minute, "every partition with 3 replicas in sync", func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		md, err := b.adm.Metadata(ctx, topics...)
		if err != nil {
			return err
		}
		for _, topic := range topics {
			for p, d := range md.Topics[topic].Partitions {
				if len(d.ISR) < 3 {
					return fmt.Errorf("%s/%d in sync on %v", topic, p, d.ISR)
				}
			}
		}
		return nil
	})
}

// untilFenced waits until node victim, frozen since frozen, has been frozen
// for brokerFrozenFor, the other brokers no longer list it and the
// executors' group coordinator is another broker. It logs each new reason
// to wait, so a slow failover shows which step took long.
func (b *brokerChaos) untilFenced(victim int, frozen time.Time) {
	b.t.Helper()
	last := ""
	eventually.Succeeds(b.t, 3*time.Minute, "the frozen broker fenced and the group coordinator moved", func() error {
		err := b.fenced(victim, frozen)
		if msg := fmt.Sprint(err); err != nil && msg != last {
			b.t.Logf("%s frozen: %s", time.Since(frozen).Round(time.Millisecond), msg)
			last = msg
		}
		return err
	})
}

func (b *brokerChaos) fenced(victim int, frozen time.Time) error {
	// A probe that reaches the frozen broker waits out its request timeout.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if d := time.Since(frozen); d < brokerFrozenFor {
		return fmt.Errorf("frozen for less than %s", brokerFrozenFor)
	}
	listed, err := b.listed(ctx, victim)
	if err != nil {
		return err
	}
	if slices.Contains(listed, b.kafka.NodeID(victim)) {
		return fmt.Errorf("the others still list it among brokers %v", listed)
	}
	coord, err := b.groupCoordinator(ctx, kafka.DefaultExecutorGroup, victim)
	if err != nil {
		return err
	}
	if coord == victim {
		return errors.New("it is still the group coordinator")
	}
	return nil
}
