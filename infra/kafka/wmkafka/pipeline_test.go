package wmkafka_test

import (
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/xbot-runtime/xbot/infra/devstack/kafkatest"
	"github.com/xbot-runtime/xbot/infra/kafka/wmkafka"
)

func meta(t *testing.T, m *message.Message) wmkafka.RecordMeta {
	t.Helper()
	md, ok := wmkafka.RecordMetaFromContext(m.Context())
	if !ok {
		t.Fatal("no record meta")
	}
	return md
}

// TestPipelinedDeliveryCommitsOnlyTheAckedPrefix: with MaxInFlight 3, three
// messages of one partition are out at once; acks out of order commit only
// the contiguous prefix; Prev chains the deliveries.
func TestPipelinedDeliveryCommitsOnlyTheAckedPrefix(t *testing.T) {
	t.Parallel()
	topic, group := kafkatest.UniqueName(t), kafkatest.UniqueName(t)
	sub := subscriber(t, wmkafka.SubscriberConfig{ConsumerGroup: group, MaxInFlight: 3, CommitInterval: 10 * time.Millisecond})
	publish(t, topic, "run-1", "a", "b", "c", "d", "e")
	ch := subscribe(t, sub, topic)
	a, b, c := receive(t, ch), receive(t, ch), receive(t, ch)
	quiet(t, ch, 100*time.Millisecond) // the window is full
	if string(a.Payload)+string(b.Payload)+string(c.Payload) != "abc" {
		t.Fatalf("order %q %q %q", a.Payload, b.Payload, c.Payload)
	}
	if meta(t, a).Prev != -1 || meta(t, b).Prev != meta(t, a).Offset || meta(t, c).Prev != meta(t, b).Offset {
		t.Errorf("prev chain %d %d %d for offsets %d %d %d", meta(t, a).Prev, meta(t, b).Prev, meta(t, c).Prev,
			meta(t, a).Offset, meta(t, b).Offset, meta(t, c).Offset)
	}
	c.Ack()
	b.Ack()
	lagIs(t, sub, topic, 5) // a is not acked: nothing may be committed
	a.Ack()
	lagIs(t, sub, topic, 2)
	d, e := receive(t, ch), receive(t, ch)
	if string(d.Payload)+string(e.Payload) != "de" || meta(t, d).Prev != meta(t, c).Offset {
		t.Fatalf("then %q %q (prev %d)", d.Payload, e.Payload, meta(t, d).Prev)
	}
	d.Ack()
	e.Ack()
	lagIs(t, sub, topic, 0)
}

// TestPipelinedNackRedeliversFromTheNackedMessage: a Nack gives up every
// later message in flight and delivers them again, in order.
func TestPipelinedNackRedeliversFromTheNackedMessage(t *testing.T) {
	t.Parallel()
	topic, group := kafkatest.UniqueName(t), kafkatest.UniqueName(t)
	sub := subscriber(t, wmkafka.SubscriberConfig{ConsumerGroup: group, MaxInFlight: 3,
		CommitInterval: 10 * time.Millisecond, NackResendDelay: time.Millisecond})
	publish(t, topic, "run-1", "a", "b", "c")
	ch := subscribe(t, sub, topic)
	a, b, c := receive(t, ch), receive(t, ch), receive(t, ch)
	a.Ack()
	b.Nack()
	select {
	case <-c.Context().Done():
	case <-time.After(waitTimeout):
		t.Fatal("the message after a Nacked one was not given up")
	}
	c.Ack() // ignored: c is delivered again
	b2, c2 := receive(t, ch), receive(t, ch)
	if string(b2.Payload)+string(c2.Payload) != "bc" || meta(t, b2).Prev != meta(t, a).Offset {
		t.Fatalf("redelivered %q %q (prev %d, want %d)", b2.Payload, c2.Payload, meta(t, b2).Prev, meta(t, a).Offset)
	}
	b2.Ack()
	c2.Ack()
	lagIs(t, sub, topic, 0)
}
