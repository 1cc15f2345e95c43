package kafka

import (
	"context"
	"fmt"
	"net"

	"github.com/twmb/franz-go/pkg/kfake"
)

// Cluster is an embedded Kafka-protocol cluster (kfake) listening on real TCP
// ports, for `xbot dev` and tests. Every Kafka client, kcat included, can talk
// to it.
type Cluster struct {
	c *kfake.Cluster
}

// ClusterConfig configures an embedded cluster.
type ClusterConfig struct {
	// Addr is the listen address of the single broker, e.g. "127.0.0.1:9092".
	// Default "127.0.0.1:0" (a free port).
	Addr string
	// DataDir keeps the cluster's data on disk so a restart resumes. Empty
	// keeps everything in memory.
	DataDir string
	// Partitions is the default partition count of auto-created topics. Default 12.
	Partitions int32
	// SASL, when its mechanism is set, makes the cluster refuse every client
	// that does not authenticate as this user. TLS settings are ignored: the
	// embedded cluster speaks plaintext.
	SASL Security
}

// StartCluster starts an embedded single-broker cluster.
func StartCluster(cfg ClusterConfig) (*Cluster, error) {
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	if cfg.Partitions == 0 {
		cfg.Partitions = 12
	}
	ln, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("embedded kafka: listen on %s: %w", cfg.Addr, err)
	}
	opts := []kfake.Opt{
		kfake.NumBrokers(1),
		kfake.ListenFn(func(string, string) (net.Listener, error) { return ln, nil }),
		kfake.DefaultNumPartitions(int(cfg.Partitions)),
		kfake.AllowAutoTopicCreation(),
	}
	if cfg.DataDir != "" {
		opts = append(opts, kfake.DataDir(cfg.DataDir))
	}
	if m := cfg.SASL.SASLMechanism; m != "" {
		opts = append(opts, kfake.EnableSASL(), kfake.Superuser(m, cfg.SASL.SASLUsername, cfg.SASL.SASLPassword))
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		_ = ln.Close()
		return nil, fmt.Errorf("embedded kafka: %w", err)
	}
	return &Cluster{c: c}, nil
}

// Addrs returns the broker addresses to use as seed brokers.
func (c *Cluster) Addrs() []string { return c.c.ListenAddrs() }

// Close stops the cluster (and persists its data when it has a data dir).
func (c *Cluster) Close() { c.c.Close() }

// Fake exposes the kfake cluster for fault injection in tests.
func (c *Cluster) Fake() *kfake.Cluster { return c.c }
