package kafka_test

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/infra/devstack/kafkatest"
	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/infra/metrics"
)

// produceTo writes n records to partition 0 of topic.
func produceTo(t *testing.T, kc kafka.Config, topic string, n int) {
	t.Helper()
	cl, err := kafka.NewClient(kc, kgo.DefaultProduceTopic(topic), kgo.AllowAutoTopicCreation(),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for i := range n {
		if err := cl.ProduceSync(testCtx(t), &kgo.Record{Value: []byte{byte(i)}, Partition: 0}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
}

// readAll reads partition 0 of topic with ReadRange; it returns an error
// unless it read want records.
func readAll(t *testing.T, kc kafka.Config, topic string, want int) error {
	n := 0
	next, err := kafka.ReadRange(testCtx(t), kc, topic, 0, 0, -1, func(kafka.Record) error { n++; return nil })
	if err != nil || n != want || next != int64(want) {
		return fmt.Errorf("read %d records up to %d, want %d up to %d: %w", n, next, want, want, err)
	}
	return nil
}

// TestAReadOutlastsAConnectionClosedBeforeItsAnswer: a broker that shuts
// down closes a connection before answering its first request, which
// franz-go does not retry (it takes it for a missing SASL setting). A read
// of a range, how an executor reads a run's events, asks again and reads
// every record.
func TestAReadOutlastsAConnectionClosedBeforeItsAnswer(t *testing.T) {
	t.Parallel()
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Close)
	kc := kafka.Config{Brokers: cluster.ListenAddrs()}
	produceTo(t, kc, "t", 3)
	retries := func() float64 {
		f, err := metrics.Gather()
		if err != nil {
			t.Fatal(err)
		}
		return f.Value("xbot_kafka_read_retries_total", "topic", "t")
	}
	before := retries()
	var closed atomic.Int64
	cluster.ControlKey(int16(kmsg.ListOffsets), func(kmsg.Request) (kmsg.Response, error, bool) {
		closed.Add(1)
		return nil, errors.New("shutting down"), true // kfake closes the connection; the control is dropped
	})
	if err := readAll(t, kc, "t", 3); err != nil {
		t.Fatal(err)
	}
	if closed.Load() != 1 {
		t.Fatalf("%d connections closed, want 1", closed.Load())
	}
	if n := retries() - before; n != 1 {
		t.Errorf("xbot_kafka_read_retries_total{topic=\"t\"} rose by %v, want 1", n)
	}
}

// TestAReadWaitsOutABrokerRestart: a read that starts while the broker is
// down (its dials refused) reads every record once the broker is back.
func TestAReadWaitsOutABrokerRestart(t *testing.T) {
	t.Parallel()
	cfg := kafka.ClusterConfig{DataDir: t.TempDir(), Partitions: 1}
	cluster, err := kafka.StartCluster(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Addr = cluster.Addrs()[0]
	kc := kafka.Config{Brokers: cluster.Addrs()}
	topic := kafkatest.UniqueName(t)
	produceTo(t, kc, topic, 3)
	cluster.Close()

	var retried atomic.Int64
	kafka.OnReadRetry(t, func(tp string, _ error) {
		if tp == topic {
			retried.Add(1)
		}
	})
	done := make(chan error, 1)
	go func() { done <- readAll(t, kc, topic, 3) }()
	eventually.Succeeds(t, waitTimeout, "a read tried again while the broker is down", func() error {
		if retried.Load() == 0 {
			return errors.New("no retry yet")
		}
		return nil
	})
	if cluster, err = kafka.StartCluster(cfg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Close)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
