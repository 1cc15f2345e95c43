package kafkatest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/xbot-runtime/xbot/infra/devstack"
	"github.com/xbot-runtime/xbot/infra/kafka"
)

// apacheStartTimeout bounds starting the shared Apache Kafka cluster: three
// JVMs are ready in ~10 s on an idle 2-core machine, several times that
// beside other test binaries under -race.
const apacheStartTimeout = 3 * time.Minute

// apacheReplication is the replication factor of the topics tests create on
// the shared Apache Kafka cluster: every partition on all three brokers,
// as min.insync.replicas 2 expects.
const apacheReplication = 3

// Cluster is Kafka as one test sees it: the seed brokers, and the names
// (topic prefix, group prefix) that keep the test's topics, consumer
// groups and transactional ids apart from other tests on the same brokers.
type Cluster struct {
	cfg  kafka.Config
	fake *kafka.Cluster // the kfake cluster; nil on Apache Kafka
}

// Addrs returns the seed brokers.
func (c *Cluster) Addrs() []string { return slices.Clone(c.cfg.Brokers) }

// Config returns the Kafka config a test's components use: the brokers,
// the test's prefixes, its partition count and replication factor.
func (c *Cluster) Config() kafka.Config {
	kc := c.cfg
	kc.Brokers = slices.Clone(kc.Brokers)
	return kc
}

// Fake returns the kfake cluster, for fault injection. On Apache Kafka it
// skips tb (RequireFake), naming counterpart: what proves the same on a
// real broker.
func (c *Cluster) Fake(tb testing.TB, counterpart string) *kafka.Cluster {
	tb.Helper()
	RequireFake(tb, counterpart)
	return c.fake
}

// server is the shared cluster of a test binary and how to stop it.
type server struct {
	shared *Cluster
	apache *devstack.ApacheKafka // started by this binary; nil otherwise
}

func (s *server) Stop(context.Context) error {
	if s.shared.fake != nil {
		s.shared.fake.Close()
	}
	if s.apache != nil {
		return s.apache.Close()
	}
	return nil
}

// startServer starts the broker BrokerEnv selects. On Apache Kafka with
// BrokersEnv set it starts nothing and uses those brokers, whose topic
// defaults are theirs (replication factor -1).
func startServer(ctx context.Context, dir string) (*server, error) {
	b, err := Broker()
	if err != nil {
		return nil, err
	}
	if b == KFake {
		c, err := kafka.StartCluster(kafka.ClusterConfig{})
		if err != nil {
			return nil, err
		}
		return &server{shared: &Cluster{cfg: kafka.Config{Brokers: c.Addrs(), InProcess: true}, fake: c}}, nil
	}
	if addrs := os.Getenv(BrokersEnv); addrs != "" {
		return &server{shared: &Cluster{cfg: kafka.Config{Brokers: strings.Split(addrs, ","), ReplicationFactor: -1}}}, nil
	}
	started := time.Now()
	k, err := devstack.StartApacheKafka(ctx, devstack.ApacheKafkaConfig{Dir: dir, Brokers: 3})
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "kafkatest: Apache Kafka %s, 3 brokers at %s, ready in %s\n",
		k.Version(), strings.Join(k.Addrs(), ","), time.Since(started).Round(time.Millisecond))
	kc := kafka.Config{Brokers: k.Addrs(), ReplicationFactor: apacheReplication}
	return &server{shared: &Cluster{cfg: kc}, apache: k}, nil
}

// deleteTopics deletes every topic under kc's prefix: a test's namespace on
// the shared Apache Kafka cluster ends with the test, as its own kfake
// cluster would, so the brokers do not carry every finished test's
// partitions.
func deleteTopics(tb testing.TB, kc kafka.Config) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	cl, err := kafka.NewClient(kc)
	if err != nil {
		tb.Errorf("kafkatest: delete topics: %v", err)
		return
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	topics, err := adm.ListTopics(ctx)
	if err != nil {
		tb.Errorf("kafkatest: list topics to delete: %v", err)
		return
	}
	var mine []string
	for _, t := range topics.Names() {
		if strings.HasPrefix(t, kc.TopicPrefix) {
			mine = append(mine, t)
		}
	}
	if len(mine) == 0 {
		return
	}
	res, err := adm.DeleteTopics(ctx, mine...)
	if err == nil {
		err = res.Error()
	}
	if err != nil && !errors.Is(err, kerr.UnknownTopicOrPartition) {
		tb.Errorf("kafkatest: %v", fmt.Errorf("delete topics %v: %w", mine, err))
	}
}
