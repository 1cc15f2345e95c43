package kafka_test

import (
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/xbot-runtime/xbot/infra/devstack/kafkatest"
	"github.com/xbot-runtime/xbot/infra/kafka"
)

func TestProducerKeepsAKeyOnOnePartition(t *testing.T) {
	t.Parallel()
	const partitions = 6
	kc := kafkatest.NewTopics(t, partitions)
	prod, err := kafka.NewProducer(kc)
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	if err := prod.Ping(testCtx(t)); err != nil {
		t.Fatalf("ping: %v", err)
	}
	const keys, perKey = 20, 3
	for i := range keys * perKey {
		key := fmt.Sprintf("run_%02d", i%keys)
		if err := prod.Produce(testCtx(t), kc.CommandsTopic(), key, fmt.Appendf(nil, "%s#%d", key, i/keys)); err != nil {
			t.Fatal(err)
		}
	}

	seen := map[string]map[int32]int{}
	used := map[int32]bool{}
	err = kafka.ReadTopic(testCtx(t), kc, kc.CommandsTopic(), func(r kafka.Record) error {
		if seen[r.Key] == nil {
			seen[r.Key] = map[int32]int{}
		}
		seen[r.Key][r.Partition]++
		used[r.Partition] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The Java client's and kcat's murmur2 partitioner, which franz-go's
	// sticky key partitioner reproduces for keyed records.
	murmur2 := kgo.StickyKeyPartitioner(nil).ForTopic(kc.CommandsTopic())
	for i := range keys {
		key := fmt.Sprintf("run_%02d", i)
		want := int32(murmur2.Partition(&kgo.Record{Key: []byte(key)}, partitions))
		if got := seen[key]; len(got) != 1 || got[want] != perKey {
			t.Errorf("key %s landed on partitions %v, want all %d records on %d", key, got, perKey, want)
		}
	}
	if len(used) < 2 {
		t.Errorf("%d keys all landed on partitions %v; keys should spread", keys, used)
	}
}

// TestProduceQueuedHandsOverBeforeTheAcknowledgement: ProduceQueued calls
// queued once the record is in the client's buffer, while the broker still
// holds its produce unanswered, and returns only after the acknowledgement.
func TestProduceQueuedHandsOverBeforeTheAcknowledgement(t *testing.T) {
	t.Parallel()
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Close)
	held, release := kafkatest.HoldFirstProduce(t, cluster)
	prod, err := kafka.NewProducer(kafka.Config{Brokers: cluster.ListenAddrs()})
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	ctx := testCtx(t)
	queued, done := make(chan struct{}), make(chan error, 1)
	go func() { done <- prod.ProduceQueued(ctx, "t", "k", []byte("v"), nil, func() { close(queued) }) }()
	for name, ch := range map[string]<-chan struct{}{"queued": queued, "the produce at the broker": held} {
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v", name, ctx.Err())
		}
	}
	select {
	case err := <-done:
		t.Fatalf("ProduceQueued returned (%v) before the broker answered", err)
	default:
	}
	release()
	if err := <-done; err != nil {
		t.Fatalf("ProduceQueued: %v", err)
	}
}
