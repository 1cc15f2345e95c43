package kafka_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/infra/devstack/kafkatest"
	"github.com/xbot-runtime/xbot/infra/kafka"
)

// view plays a projection's store: records and checkpoints are written
// together in Apply, and the first failures calls of Apply fail.
type view struct {
	mu       sync.Mutex
	next     map[int32]int64
	applied  map[int32][]kafka.Record
	calls    int
	failures int
}

func newView(failures int) *view {
	return &view{next: map[int32]int64{}, applied: map[int32][]kafka.Record{}, failures: failures}
}

func (v *view) Checkpoints(context.Context) (map[int32]int64, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	return maps.Clone(v.next), nil
}

func (v *view) Apply(_ context.Context, recs []kafka.Record) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.calls++
	if v.failures > 0 {
		v.failures--
		return errors.New("view unavailable")
	}
	for _, r := range recs {
		v.applied[r.Partition] = append(v.applied[r.Partition], r)
		v.next[r.Partition] = r.Offset + 1
	}
	return nil
}

func (v *view) count() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	n := 0
	for _, recs := range v.applied {
		n += len(recs)
	}
	return n
}

// startConsumer runs RunConsumer for v until stop is called or the test ends.
func startConsumer(t *testing.T, kc kafka.Config, group, topic string, v *view) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	cfg := kafka.ConsumerConfig{Kafka: kc, Group: group, Topic: topic, Checkpoints: v.Checkpoints, Apply: v.Apply,
		Logger: testLogger(t, "consumer")}
	go func() {
		defer close(done)
		if err := kafka.RunConsumer(ctx, cfg); err != nil {
			t.Errorf("RunConsumer: %v", err)
		}
	}()
	stop = sync.OnceFunc(func() { cancel(); <-done })
	t.Cleanup(stop)
	return stop
}

func produceKeyed(t *testing.T, kc kafka.Config, topic, prefix string, n int) {
	t.Helper()
	prod, err := kafka.NewProducer(kc)
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	for i := range n {
		if err := prod.Produce(testCtx(t), topic, fmt.Sprintf("run_%d", i%7), fmt.Appendf(nil, "%s-%d", prefix, i)); err != nil {
			t.Fatal(err)
		}
	}
}

// produceTransactions writes committed and aborted transactions, so that the
// topic has control records and records read_committed must skip.
func produceTransactions(t *testing.T, kc kafka.Config, topic string) (committedCount int) {
	t.Helper()
	cl, err := kafka.NewClient(kc, kgo.TransactionalID(kafkatest.UniqueName(t)))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for txn, commit := range []kgo.TransactionEndTry{kgo.TryCommit, kgo.TryAbort, kgo.TryCommit} {
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for i := range 9 {
			rec := &kgo.Record{Topic: topic, Key: fmt.Appendf(nil, "run_%d", i), Value: fmt.Appendf(nil, "txn%d-%d", txn, i)}
			if err := cl.ProduceSync(testCtx(t), rec).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		if err := cl.EndTransaction(testCtx(t), commit); err != nil {
			t.Fatal(err)
		}
		if commit == kgo.TryCommit {
			committedCount += 9
		}
	}
	return committedCount
}

// assertAppliedOnce checks that v applied every committed record of topic
// exactly once, in offset order per partition.
func assertAppliedOnce(t *testing.T, kc kafka.Config, topic string, v *view) {
	t.Helper()
	v.mu.Lock()
	defer v.mu.Unlock()
	for p := range kc.Partitions {
		want, _ := committed(t, kc, topic, p)
		equal(t, fmt.Sprintf("records applied from partition %d", p), values(v.applied[p]), want)
	}
}

func TestRunConsumerResumesFromCheckpoints(t *testing.T) {
	t.Parallel()
	kc := kafkatest.NewTopics(t, 3)
	topic, group := kc.EventsTopic(), kafkatest.UniqueName(t)
	v := newView(0)

	produceKeyed(t, kc, topic, "first", 30)
	stop := startConsumer(t, kc, group, topic, v)
	eventually.Holds(t, waitTimeout, "the first 30 records to be applied", func() bool { return v.count() >= 30 })
	stop()
	assertAppliedOnce(t, kc, topic, v)

	// The group never commits offsets: only the view's checkpoints keep the
	// restarted consumer from applying the first 30 records again.
	total := 30 + produceTransactions(t, kc, topic)
	produceKeyed(t, kc, topic, "second", 30)
	total += 30
	stop = startConsumer(t, kc, group, topic, v)
	eventually.Holds(t, waitTimeout, fmt.Sprintf("%d records to be applied", total), func() bool { return v.count() >= total })
	stop()
	assertAppliedOnce(t, kc, topic, v)
}

func TestRunConsumerRetriesAFailedApply(t *testing.T) {
	t.Parallel()
	kc := kafkatest.NewTopics(t, 2)
	topic := kc.EventsTopic()
	v := newView(2)
	produceKeyed(t, kc, topic, "r", 20)
	stop := startConsumer(t, kc, kafkatest.UniqueName(t), topic, v)
	eventually.Holds(t, waitTimeout, "20 records to be applied", func() bool { return v.count() >= 20 })
	stop()
	assertAppliedOnce(t, kc, topic, v)
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.failures != 0 || v.calls < 3 {
		t.Fatalf("Apply was called %d times with %d failures left; want the failing batch retried", v.calls, v.failures)
	}
}
