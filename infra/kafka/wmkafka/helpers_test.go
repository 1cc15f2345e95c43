package wmkafka_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/infra/kafka/wmkafka"
)

// cluster is one embedded broker shared by every test of the package; tests
// keep apart by unique topics and groups.
var cluster *kafka.Cluster

func TestMain(m *testing.M) {
	c, err := kafka.StartCluster(kafka.ClusterConfig{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "start embedded kafka:", err)
		os.Exit(1)
	}
	cluster = c
	code := m.Run()
	c.Close()
	os.Exit(code)
}

// testPartitions is the partition count of every topic the suite creates:
// several partitions, so per-partition ordering and parallel delivery are
// both exercised.
const testPartitions = 8

func kafkaConfig() kafka.Config {
	return kafka.Config{Brokers: cluster.Addrs(), Partitions: testPartitions}
}

var nameSeq atomic.Int64

// uniqueName returns a name no other test (or -count repetition) uses.
func uniqueName(t *testing.T) string {
	t.Helper()
	n := strings.NewReplacer("/", "-", " ", "-").Replace(t.Name())
	return fmt.Sprintf("%s-%d", strings.ToLower(n), nameSeq.Add(1))
}

// waitTimeout bounds every wait: generous for a loaded 2-core CI machine
// under -race, far above the ~100 ms a group join takes on kfake.
const waitTimeout = 30 * time.Second

// testCtx is a context bounded by waitTimeout and cancelled when the test ends.
func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	t.Cleanup(cancel)
	return ctx
}

// subscriber returns a subscriber (on the shared cluster unless cfg names
// brokers), closed when the test ends.
func subscriber(t *testing.T, cfg wmkafka.SubscriberConfig) *wmkafka.Subscriber {
	t.Helper()
	if cfg.Kafka.Brokers == nil {
		cfg.Kafka = kafkaConfig()
	}
	sub, err := wmkafka.NewSubscriber(cfg)
	if err != nil {
		t.Fatalf("new subscriber: %v", err)
	}
	t.Cleanup(func() { _ = sub.Close() })
	return sub
}

// publish publishes one message per payload (keyed by key when not empty)
// and returns them.
func publish(t *testing.T, topic, key string, payloads ...string) []*message.Message {
	t.Helper()
	pub, err := wmkafka.NewPublisher(wmkafka.PublisherConfig{Kafka: kafkaConfig()})
	if err != nil {
		t.Fatalf("new publisher: %v", err)
	}
	defer func() { _ = pub.Close() }()
	msgs := make([]*message.Message, len(payloads))
	for i, p := range payloads {
		msgs[i] = message.NewMessage(watermill.NewUUID(), []byte(p))
		if key != "" {
			msgs[i].Metadata.Set(wmkafka.DefaultKeyMetadata, key)
		}
	}
	if err := pub.Publish(topic, msgs...); err != nil {
		t.Fatalf("publish: %v", err)
	}
	return msgs
}

// subscribe subscribes until the test ends.
func subscribe(t *testing.T, sub *wmkafka.Subscriber, topic string) <-chan *message.Message {
	t.Helper()
	ch, err := sub.Subscribe(testCtx(t), topic)
	if err != nil {
		t.Fatalf("subscribe to %s: %v", topic, err)
	}
	return ch
}

// receive waits for the next message.
func receive(t *testing.T, ch <-chan *message.Message) *message.Message {
	t.Helper()
	select {
	case msg, ok := <-ch:
		if !ok {
			t.Fatal("messages channel closed")
		}
		return msg
	case <-time.After(waitTimeout):
		t.Fatalf("no message within %s", waitTimeout)
		return nil
	}
}

// quiet asserts that nothing arrives on ch for d.
func quiet(t *testing.T, ch <-chan *message.Message, d time.Duration) {
	t.Helper()
	select {
	case msg := <-ch:
		t.Fatalf("unexpected message %s (%q)", msg.UUID, msg.Payload)
	case <-time.After(d):
	}
}

// publisher returns a publisher closed when the test ends.
func publisher(t *testing.T) *wmkafka.Publisher {
	t.Helper()
	pub, err := wmkafka.NewPublisher(wmkafka.PublisherConfig{Kafka: kafkaConfig()})
	if err != nil {
		t.Fatalf("new publisher: %v", err)
	}
	t.Cleanup(func() { _ = pub.Close() })
	return pub
}
