package wmkafka_test

import (
	"context"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/xbot-runtime/xbot/infra/devstack/kafkatest"
	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/infra/kafka/wmkafka"
)

// One embedded broker is shared by every test of the package; tests
// keep apart by unique topics and groups.
func TestMain(m *testing.M) { kafkatest.Main(m) }

// testPartitions is the partition count of every topic the suite creates:
// several partitions, so per-partition ordering and parallel delivery are
// both exercised.
const testPartitions = 8

func kafkaConfig(t *testing.T) kafka.Config {
	return kafka.Config{Brokers: kafkatest.Shared(t).Addrs(), Partitions: testPartitions}
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
		cfg.Kafka = kafkaConfig(t)
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
	pub, err := wmkafka.NewPublisher(wmkafka.PublisherConfig{Kafka: kafkaConfig(t)})
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
	pub, err := wmkafka.NewPublisher(wmkafka.PublisherConfig{Kafka: kafkaConfig(t)})
	if err != nil {
		t.Fatalf("new publisher: %v", err)
	}
	t.Cleanup(func() { _ = pub.Close() })
	return pub
}
