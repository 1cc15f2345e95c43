package wmkafka_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/infra/devstack/kafkatest"
	"github.com/xbot-runtime/xbot/infra/kafka/wmkafka"
)

// lagIs waits until the group's committed lag on topic is want.
func lagIs(t *testing.T, sub *wmkafka.Subscriber, topic string, want int64) {
	t.Helper()
	eventually.Succeeds(t, waitTimeout, fmt.Sprintf("lag total %d", want), func() error {
		lag, err := sub.Lag(testCtx(t), topic)
		if err != nil {
			return fmt.Errorf("lag: %w", err)
		}
		if lag.Total() != want {
			return fmt.Errorf("lag = %v", lag.Partitions)
		}
		return nil
	})
}

func TestOffsetIsCommittedOnlyAfterAck(t *testing.T) {
	t.Parallel()
	topic, group := kafkatest.UniqueName(t), kafkatest.UniqueName(t)
	cfg := wmkafka.SubscriberConfig{ConsumerGroup: group, CommitInterval: 10 * time.Millisecond}
	first := subscriber(t, cfg)
	publish(t, topic, "run-1", "a", "b")
	ch := subscribe(t, first, topic)

	receive(t, ch).Ack()
	b := receive(t, ch) // never Acked
	lagIs(t, first, topic, 1)
	if err := first.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	select {
	case <-b.Context().Done():
	default:
		t.Fatal("context of an in-flight message not cancelled by Close")
	}

	second := subscriber(t, cfg)
	again := receive(t, subscribe(t, second, topic))
	if again.UUID != b.UUID {
		t.Fatalf("after restart got %q, want the unacked %q", again.Payload, b.Payload)
	}
	again.Ack()
	lagIs(t, second, topic, 0)
}

func TestNackRedeliversBeforeTheNextMessage(t *testing.T) {
	t.Parallel()
	topic := kafkatest.UniqueName(t)
	const delay = 50 * time.Millisecond
	sub := subscriber(t, wmkafka.SubscriberConfig{ConsumerGroup: kafkatest.UniqueName(t), NackResendDelay: delay})
	msgs := publish(t, topic, "run-1", "a", "b")
	ch := subscribe(t, sub, topic)

	m := receive(t, ch)
	nacked := time.Now()
	m.Nack()
	select {
	case <-m.Context().Done():
	case <-time.After(waitTimeout):
		t.Fatal("context of a nacked message not cancelled")
	}
	again := receive(t, ch)
	if again.UUID != msgs[0].UUID || time.Since(nacked) < delay {
		t.Fatalf("got %q after %s, want %q again after >= %s", again.Payload, time.Since(nacked), "a", delay)
	}
	again.Ack()
	if next := receive(t, ch); next.UUID != msgs[1].UUID {
		t.Fatalf("got %q, want %q", next.Payload, "b")
	}
}

func TestMetadataKeyAndPosition(t *testing.T) {
	t.Parallel()
	topic := kafkatest.UniqueName(t)
	sub := subscriber(t, wmkafka.SubscriberConfig{})
	pub := publisher(t)
	keyed := message.NewMessage("uuid-1", []byte("x"))
	keyed.Metadata.Set(wmkafka.DefaultKeyMetadata, "run-1")
	keyed.Metadata.Set("tenant_id", "t1")
	unkeyed := message.NewMessage("uuid-2", []byte("y"))
	if err := pub.Publish(topic, keyed, unkeyed); err != nil {
		t.Fatalf("publish: %v", err)
	}
	ch := subscribe(t, sub, topic)
	got := map[string]*message.Message{}
	for range 2 {
		m := receive(t, ch)
		m.Ack()
		got[m.UUID] = m
	}
	k, u := got["uuid-1"], got["uuid-2"]
	if k == nil || u == nil {
		t.Fatalf("got %v, want uuid-1 and uuid-2", got)
	}
	if k.Metadata.Get("tenant_id") != "t1" || k.Metadata.Get(wmkafka.DefaultKeyMetadata) != "run-1" || len(u.Metadata) != 0 {
		t.Fatalf("metadata = %v and %v", k.Metadata, u.Metadata)
	}
	km, ok := wmkafka.RecordMetaFromContext(k.Context())
	um, _ := wmkafka.RecordMetaFromContext(u.Context())
	if !ok || km.Topic != topic || string(km.Key) != "run-1" || string(um.Key) != "uuid-2" || km.Timestamp.IsZero() {
		t.Fatalf("record meta = %+v and %+v", km, um)
	}
}

// TestReadCommitted: records of an aborted transaction are never delivered,
// a record from a plain producer gets a UUID from its position, and a group
// that consumed everything has no lag although transaction markers follow
// the last record.
func TestReadCommitted(t *testing.T) {
	t.Parallel()
	topic := kafkatest.UniqueName(t)
	sub := subscriber(t, wmkafka.SubscriberConfig{ConsumerGroup: kafkatest.UniqueName(t), CommitInterval: 10 * time.Millisecond})
	if err := sub.SubscribeInitialize(topic); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	produceTxn(t, topic, "aborted", kgo.TryAbort)
	produceTxn(t, topic, "committed", kgo.TryCommit)
	ch := subscribe(t, sub, topic)

	m := receive(t, ch)
	meta, _ := wmkafka.RecordMetaFromContext(m.Context())
	if string(m.Payload) != "committed" || m.UUID != fmt.Sprintf("%s/%d/%d", topic, meta.Partition, meta.Offset) {
		t.Fatalf("got %s %q, want the committed record with a position UUID", m.UUID, m.Payload)
	}
	m.Ack()
	quiet(t, ch, 200*time.Millisecond)
	lagIs(t, sub, topic, 0)
}

func produceTxn(t *testing.T, topic, value string, end kgo.TransactionEndTry) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(kafkatest.Shared(t).Addrs()...), kgo.TransactionalID(kafkatest.UniqueName(t)))
	if err != nil {
		t.Fatalf("txn client: %v", err)
	}
	defer cl.Close()
	ctx := testCtx(t)
	if err := cl.BeginTransaction(); err != nil {
		t.Fatalf("begin: %v", err)
	}
	rec := &kgo.Record{Topic: topic, Key: []byte("run-1"), Value: []byte(value)}
	if err := cl.ProduceSync(ctx, rec).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
	if err := cl.EndTransaction(ctx, end); err != nil {
		t.Fatalf("end transaction: %v", err)
	}
}

// TestRevokedPartitionIsRedelivered: when a rebalance moves a partition away
// from a member holding an unacked message, that message's context is
// cancelled and the new owner delivers it again.
func TestRevokedPartitionIsRedelivered(t *testing.T) {
	t.Parallel()
	topic, group := kafkatest.UniqueName(t), kafkatest.UniqueName(t)
	cfg := wmkafka.SubscriberConfig{ConsumerGroup: group}
	cfg.Kafka = kafkaConfig(t)
	cfg.Kafka.Partitions = 2
	first := subscriber(t, cfg)
	if err := first.SubscribeInitialize(topic); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	for i := range 20 {
		publish(t, topic, fmt.Sprintf("run-%d", i), "x")
	}
	ch1 := subscribe(t, first, topic)
	held := map[string]*message.Message{}
	for range 2 { // the head of each partition, both unacked
		m := receive(t, ch1)
		held[m.UUID] = m
	}

	ch2 := subscribe(t, subscriber(t, cfg), topic)
	moved := receive(t, ch2)
	orig, ok := held[moved.UUID]
	if !ok {
		t.Fatalf("new owner got %s, want one of the unacked heads", moved.UUID)
	}
	select {
	case <-orig.Context().Done():
	default:
		t.Fatal("context of the revoked in-flight message not cancelled")
	}
}

func TestSubscribeContextCancelClosesChannel(t *testing.T) {
	t.Parallel()
	topic := kafkatest.UniqueName(t)
	sub := subscriber(t, wmkafka.SubscriberConfig{ConsumerGroup: kafkatest.UniqueName(t)})
	publish(t, topic, "", "a")
	ctx, cancel := context.WithCancel(context.Background())
	ch, err := sub.Subscribe(ctx, topic)
	if err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	m := receive(t, ch)
	cancel()
	select {
	case _, open := <-ch:
		if open {
			t.Fatal("message delivered after cancel")
		}
	case <-time.After(waitTimeout):
		t.Fatal("channel not closed after the subscribe context was cancelled")
	}
	if m.Context().Err() == nil {
		t.Fatal("in-flight message context not cancelled")
	}
}

func TestClosedPublisherAndSubscriberRefuse(t *testing.T) {
	t.Parallel()
	pub := publisher(t)
	sub := subscriber(t, wmkafka.SubscriberConfig{})
	if err := errors.Join(pub.Close(), sub.Close(), pub.Close(), sub.Close()); err != nil {
		t.Fatalf("close: %v", err)
	}
	if err := pub.Publish("t", message.NewMessage("u", nil)); !errors.Is(err, wmkafka.ErrPublisherClosed) {
		t.Fatalf("publish after close: %v, want ErrPublisherClosed", err)
	}
	if _, err := sub.Subscribe(context.Background(), "t"); !errors.Is(err, wmkafka.ErrSubscriberClosed) {
		t.Fatalf("subscribe after close: %v, want ErrSubscriberClosed", err)
	}
}

func TestLagNeedsAGroup(t *testing.T) {
	t.Parallel()
	sub := subscriber(t, wmkafka.SubscriberConfig{})
	if _, err := sub.Lag(testCtx(t), "t"); !errors.Is(err, wmkafka.ErrNoConsumerGroup) {
		t.Fatalf("lag without group: %v, want ErrNoConsumerGroup", err)
	}
}

func TestLagCountsUncommitted(t *testing.T) {
	t.Parallel()
	topic := kafkatest.UniqueName(t)
	sub := subscriber(t, wmkafka.SubscriberConfig{ConsumerGroup: kafkatest.UniqueName(t), CommitInterval: 10 * time.Millisecond})
	publish(t, topic, "", "a", "b", "c")
	lagIs(t, sub, topic, 3)
	ch := subscribe(t, sub, topic)
	for range 3 {
		receive(t, ch).Ack()
	}
	lagIs(t, sub, topic, 0)
}

// TestBackPressureKeepsOrder: more records than a partition queue holds
// (pauseAt) pause the partition; records fetched while it is paused are
// dropped and fetched again after resume. Every record still arrives exactly
// once, in order.
func TestBackPressureKeepsOrder(t *testing.T) {
	t.Parallel()
	const n = 3000 // about three times pauseAt, per batch
	topic := kafkatest.UniqueName(t)
	payloads := make([]string, 2*n)
	for i := range payloads {
		payloads[i] = fmt.Sprint(i)
	}
	publish(t, topic, "run-1", payloads[:n]...)
	ch := subscribe(t, subscriber(t, wmkafka.SubscriberConfig{ConsumerGroup: kafkatest.UniqueName(t)}), topic)
	for i := range 2 * n {
		m := receive(t, ch)
		if string(m.Payload) != payloads[i] {
			t.Fatalf("message %d is %q, want %q", i, m.Payload, payloads[i])
		}
		m.Ack()
		if i == 0 { // the partition is paused now, with a fetch in flight
			publish(t, topic, "run-1", payloads[n:]...)
		}
	}
	quiet(t, ch, 100*time.Millisecond)
}
