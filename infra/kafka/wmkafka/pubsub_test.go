package wmkafka_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/pubsub/tests"

	"github.com/xbot-runtime/xbot/infra/kafka/wmkafka"
)

// newPubSub returns a publisher and a subscriber in group (none when empty),
// both closed when the test ends.
func newPubSub(t *testing.T, group string) (*wmkafka.Publisher, *wmkafka.Subscriber) {
	t.Helper()
	pub, err := wmkafka.NewPublisher(wmkafka.PublisherConfig{Kafka: kafkaConfig(t)})
	if err != nil {
		t.Fatalf("new publisher: %v", err)
	}
	sub, err := wmkafka.NewSubscriber(wmkafka.SubscriberConfig{
		Kafka:         kafkaConfig(t),
		ConsumerGroup: group,
		// The suite nacks hundreds of times; a short delay keeps it fast.
		NackResendDelay: 10 * time.Millisecond,
	})
	if err != nil {
		t.Fatalf("new subscriber: %v", err)
	}
	t.Cleanup(func() {
		_ = pub.Close()
		_ = sub.Close()
	})
	return pub, sub
}

// groupPerTest: every pub/sub a suite test builds joins the same group (one
// per test), so a new subscriber continues where a closed one committed.
func groupPerTest(t *testing.T) (message.Publisher, message.Subscriber) {
	return newPubSub(t, "g-"+strings.NewReplacer("/", "-").Replace(t.Name()))
}

func withGroup(t *testing.T, group string) (message.Publisher, message.Subscriber) {
	return newPubSub(t, group)
}

// keyedByPayload publishes through a publisher that keys every message by its
// payload (via the partition_key metadata), as an application keys by
// entity: the suite's ordering test checks order per payload.
func keyedByPayload(t *testing.T) (message.Publisher, message.Subscriber) {
	pub, sub := groupPerTest(t)
	return payloadKeyer{pub}, sub
}

type payloadKeyer struct{ message.Publisher }

func (p payloadKeyer) Publish(topic string, msgs ...*message.Message) error {
	keyed := make([]*message.Message, len(msgs))
	for i, m := range msgs {
		keyed[i] = m.Copy()
		keyed[i].Metadata.Set(wmkafka.DefaultKeyMetadata, string(m.Payload))
	}
	return p.Publisher.Publish(topic, keyed...)
}

func noGroup(t *testing.T) (message.Publisher, message.Subscriber) {
	return newPubSub(t, "")
}

// groupFeatures are what a consumer group on Kafka gives: positions persist
// across subscribers of the group; delivery is at least once, so
// ExactlyOnceDelivery is false (a message unacked when its partition moves is
// delivered again). GuaranteedOrder is false here only because the suite keys
// its messages by UUID, which spreads them over partitions; per-partition
// order is checked by TestPubSubKeyed. NewSubscriberReceivesOldMessages is
// false because every subscriber of one test shares its group; the no-group
// mode has it (TestPubSubNoGroup). RestartServiceCommand is nil (TestReconnect
// skips): the broker runs inside the test process, so no command can restart
// it. No feature is off because of kfake. ForceShort is not set: the suite
// runs at full size (5,000-10,000 messages per test).
var groupFeatures = tests.Features{
	ConsumerGroups:      true,
	ExactlyOnceDelivery: false,
	GuaranteedOrder:     false,
	Persistent:          true,
}

func TestPubSub(t *testing.T) {
	t.Parallel()
	tests.TestPubSub(t, groupFeatures, groupPerTest, withGroup)
}

// TestPubSubKeyed runs the suite with messages keyed by payload, so each key
// lives in one partition and its order is guaranteed (TestPublishSubscribeInOrder,
// TestNoAck run here).
func TestPubSubKeyed(t *testing.T) {
	t.Parallel()
	f := groupFeatures
	f.GuaranteedOrder = true
	tests.TestPubSub(t, f, keyedByPayload, withGroup)
}

// TestPubSubNoGroup runs the suite without a consumer group: every subscriber
// reads each partition from the start. ForceShort: at full size its
// TestConcurrentSubscribe is 50 subscribers each reading all 5,000 messages
// (250 k deliveries), which under -race takes longer than everything else
// together and checks nothing the short size (10 x 100) does not.
func TestPubSubNoGroup(t *testing.T) {
	t.Parallel()
	tests.TestPubSub(t, tests.Features{
		ConsumerGroups:                   false,
		Persistent:                       true,
		NewSubscriberReceivesOldMessages: true,
		ForceShort:                       true,
	}, noGroup, nil)
}

// TestPubSubStress repeats the suite STRESS_TEST_COUNT (default 10) times in
// parallel. It takes minutes, so it runs only with WMKAFKA_STRESS=1.
func TestPubSubStress(t *testing.T) {
	if testing.Short() || os.Getenv("WMKAFKA_STRESS") != "1" {
		t.Skip("set WMKAFKA_STRESS=1 (without -short) to run the stress suite")
	}
	tests.TestPubSubStressTest(t, groupFeatures, groupPerTest, withGroup)
}
