package wmkafka_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/xbot-runtime/xbot/infra/devstack/kafkatest"
	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/infra/kafka/wmkafka"
)

// TestPublishWritesKeyMetadataAndUUID: a published message is a record keyed
// by its partition_key metadata (else its UUID), whose headers are its
// metadata and its UUID; messages of one key keep their order.
func TestPublishWritesKeyMetadataAndUUID(t *testing.T) {
	t.Parallel()
	topic := kafkatest.UniqueName(t)
	var msgs []*message.Message
	for i := range 5 {
		m := message.NewMessage(fmt.Sprintf("uuid-%d", i), fmt.Appendf(nil, "payload-%d", i))
		m.Metadata.Set("xbot-run-id", "run_1")
		m.Metadata.Set(wmkafka.DefaultKeyMetadata, "run_1")
		msgs = append(msgs, m)
	}
	unkeyed := message.NewMessage("uuid-unkeyed", []byte("x"))
	pub := publisher(t)
	if err := pub.Publish(topic, append(msgs, unkeyed)...); err != nil {
		t.Fatalf("publish: %v", err)
	}
	var got []kafka.Record
	err := kafka.ReadTopic(testCtx(t), kafkaConfig(t), topic, func(r kafka.Record) error {
		got = append(got, r)
		return nil
	})
	if err != nil || len(got) != 6 {
		t.Fatalf("read %d records (%v), want 6", len(got), err)
	}
	i := 0
	for _, r := range got {
		if r.Key == unkeyed.UUID {
			if r.Headers[wmkafka.UUIDHeader] != unkeyed.UUID {
				t.Errorf("unkeyed record headers %v", r.Headers)
			}
			continue
		}
		want := msgs[i]
		if r.Key != "run_1" || string(r.Value) != string(want.Payload) || r.Headers[wmkafka.UUIDHeader] != want.UUID ||
			r.Headers["xbot-run-id"] != "run_1" {
			t.Errorf("record %d: key %q value %q headers %v, want message %s in order", i, r.Key, r.Value, r.Headers, want.UUID)
		}
		i++
	}
}

func TestClosedPublisherRefuses(t *testing.T) {
	t.Parallel()
	pub := publisher(t)
	if err := errors.Join(pub.Close(), pub.Close()); err != nil {
		t.Fatalf("close: %v", err)
	}
	err := pub.Publish("t", message.NewMessage("u", nil))
	if !errors.Is(err, wmkafka.ErrPublisherClosed) {
		t.Fatalf("publish after close: %v, want ErrPublisherClosed", err)
	}
}
