package devstack

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"
)

// ReadyTopic is the topic StartApacheKafka commits one transaction to before
// it returns, proving that the transaction coordinator and its log serve.
const ReadyTopic = "xbot.devstack.ready"

// kafkaPoll is the interval between readiness probes: a JVM takes seconds,
// so a finer poll would only spend the CPU the brokers need.
const kafkaPoll = 250 * time.Millisecond

// errNodeExited means a broker's JVM ended before it was ready.
var errNodeExited = errors.New("kafka node exited before it was ready")

// waitCluster waits until every broker lists all brokers, then commits a
// transaction.
func (k *ApacheKafka) waitCluster(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, kafkaReadyTimeout)
	defer cancel()
	for _, n := range k.nodes {
		if err := k.poll(ctx, n, func(ctx context.Context) error { return k.probeMetadata(ctx, n, k.allIDs()) }); err != nil {
			return err
		}
		k.cfg.Logger.Info("devstack: kafka broker serves metadata", zap.Int("node_id", n.id),
			zap.String("addr", n.addr()), zap.Duration("since_jvm_start", time.Since(n.launched)))
	}
	if err := k.poll(ctx, k.nodes[0], k.probeTransaction); err != nil {
		return err
	}
	k.cfg.Logger.Info("devstack: kafka committed a transaction", zap.Duration("since_jvm_start", time.Since(k.nodes[0].launched)))
	if k.sec.sasl != nil {
		if err := k.poll(ctx, k.nodes[0], k.sec.sasl.addSCRAM(k.clientOpts(k.Addrs()...))); err != nil {
			return err
		}
		for _, n := range k.nodes {
			if err := k.poll(ctx, n, k.sec.sasl.probeSCRAM(n.addr(), k.sec.tls)); err != nil {
				return err
			}
		}
	}
	return nil
}

// clientOpts are the options of a devstack client of the cluster, seeded
// with addrs: over TLS and signed in as the brokers' internal user when the
// listener requires it.
func (k *ApacheKafka) clientOpts(addrs ...string) []kgo.Opt {
	return append([]kgo.Opt{kgo.SeedBrokers(addrs...)}, k.sec.clientOpts()...)
}

// waitNode waits until node n lists itself.
func (k *ApacheKafka) waitNode(ctx context.Context, n *kafkaNode) error {
	ctx, cancel := context.WithTimeout(ctx, kafkaReadyTimeout)
	defer cancel()
	return k.poll(ctx, n, func(ctx context.Context) error { return k.probeMetadata(ctx, n, []int32{int32(n.id)}) }) //nolint:gosec // 1 or 3 nodes
}

// allIDs lists every node.id.
func (k *ApacheKafka) allIDs() []int32 {
	ids := make([]int32, len(k.nodes))
	for i := range k.nodes {
		ids[i] = k.NodeID(i)
	}
	return ids
}

// poll calls probe until it succeeds, the JVM of any node that runs exits
// (the others wait for it in vain), or ctx ends.
func (k *ApacheKafka) poll(ctx context.Context, n *kafkaNode, probe func(context.Context) error) error {
	tick := time.NewTicker(kafkaPoll)
	defer tick.Stop()
	for {
		err := probe(ctx)
		if err == nil {
			return nil
		}
		if m := k.exitedNode(); m != nil {
			return fmt.Errorf("node %d: %w: %w", m.id, errNodeExited, m.proc.err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("node %d not ready: %w (last attempt: %w)", n.id, ctx.Err(), err)
		case <-tick.C:
		}
	}
}

// exitedNode returns a node whose JVM was started and has exited, or nil.
func (k *ApacheKafka) exitedNode() *kafkaNode {
	for _, n := range k.nodes {
		if n.proc == nil {
			continue
		}
		select {
		case <-n.proc.exited:
			return n
		default:
		}
	}
	return nil
}

// probeMetadata asks node n alone for the cluster's brokers and checks that
// want are among them (a broker is listed once it is unfenced).
func (k *ApacheKafka) probeMetadata(ctx context.Context, n *kafkaNode, want []int32) error {
	cl, err := kgo.NewClient(append(k.clientOpts(n.addr()), kgo.RetryTimeout(time.Second))...)
	if err != nil {
		return fmt.Errorf("kafka client: %w", err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second) // one answer from a live broker takes milliseconds
	defer cancel()
	m, err := kadm.NewClient(cl).BrokerMetadata(ctx)
	if err != nil {
		return fmt.Errorf("metadata from %s: %w", n.addr(), err)
	}
	have := m.Brokers.NodeIDs()
	for _, id := range want {
		if !slices.Contains(have, id) {
			return fmt.Errorf("metadata from %s lists brokers %v, not yet %d", n.addr(), have, id)
		}
	}
	return nil
}

// probeTransaction commits one record to ReadyTopic with a transactional,
// acks=all producer. The first one creates the transaction state log.
func (k *ApacheKafka) probeTransaction(ctx context.Context) error {
	cl, err := kgo.NewClient(append(k.clientOpts(k.Addrs()...), kgo.TransactionalID("xbot-devstack-ready"),
		kgo.RequiredAcks(kgo.AllISRAcks()), kgo.AllowAutoTopicCreation(), kgo.RetryTimeout(10*time.Second))...)
	if err != nil {
		return fmt.Errorf("kafka client: %w", err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second) // creating the state log's 12 partitions takes seconds
	defer cancel()
	if err := cl.BeginTransaction(); err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: ReadyTopic, Value: []byte("ready")}).FirstErr(); err != nil {
		_ = cl.EndTransaction(ctx, kgo.TryAbort) // the produce error is what matters
		return fmt.Errorf("produce to %s: %w", ReadyTopic, err)
	}
	if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		return fmt.Errorf("commit transaction: %w", err)
	}
	return nil
}
