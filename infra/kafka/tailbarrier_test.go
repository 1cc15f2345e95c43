package kafka_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/xbot-runtime/xbot/infra/devstack/kafkatest"
	"github.com/xbot-runtime/xbot/infra/kafka"
)

// gatedTail is a tail whose deliveries wait until open is closed.
type gatedTail struct {
	tailed
	open chan struct{}
}

func (g *gatedTail) deliver(recs []kafka.Record) {
	<-g.open
	g.tailed.deliver(recs)
}

// TestBarrierWaitsForEverythingCommittedBeforeIt: while the tail cannot
// hand records over, a barrier after committed (and aborted) transactions
// does not pass; once it can, the barrier passes with every committed
// record delivered, also when the last transaction of a partition was
// aborted (its marker, not a record, ends the stable log).
func TestBarrierWaitsForEverythingCommittedBeforeIt(t *testing.T) {
	t.Parallel()
	kc := kafkatest.NewTopics(t, 3)
	topic := kc.EventsTopic()
	g := &gatedTail{open: make(chan struct{})}
	tail, err := kafka.NewTail(kafka.TailConfig{Kafka: kc, Topic: topic, Deliver: g.deliver, Logger: testLogger(t, "tail")})
	if err != nil {
		t.Fatal(err)
	}
	runTail(t, tail)
	committed := produceTransactions(t, kc, topic)
	abortTransaction(t, kc, topic)

	// The tail is stuck in its first delivery: the barrier cannot pass.
	ctx, cancel := context.WithTimeout(testCtx(t), 300*time.Millisecond)
	err = tail.Barrier(ctx)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("barrier while nothing was delivered: %v, want it to wait", err)
	}

	close(g.open)
	var wg sync.WaitGroup
	for i := range 20 { // concurrent barriers share listings and all pass
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := tail.Barrier(testCtx(t)); err != nil {
				t.Errorf("barrier %d: %v", i, err)
				return
			}
			if n := len(g.values()); n != committed {
				t.Errorf("barrier %d passed with %d records delivered, want the %d committed", i, n, committed)
			}
		}()
	}
	wg.Wait()
	assertOffsetOrder(t, &g.tailed)
}

// TestBarrierOfAnIdleTopicPassesAtOnce: nothing was committed since the
// tail started, so there is nothing to wait for.
func TestBarrierOfAnIdleTopicPassesAtOnce(t *testing.T) {
	t.Parallel()
	kc := kafkatest.NewTopics(t, 2)
	topic := kc.EventsTopic()
	produceKeyed(t, kc, topic, "before", 10) // before the start: not the tail's
	var got tailed
	tail := startTail(t, kc, topic, &got)
	if err := tail.Barrier(testCtx(t)); err != nil {
		t.Fatalf("barrier: %v", err)
	}
	if n := len(got.values()); n != 0 {
		t.Fatalf("delivered %d records from before the start", n)
	}
}

// runTail runs tail until the test ends and waits until it is ready.
func runTail(t *testing.T, tail *kafka.Tail) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- tail.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("tail run: %v", err)
		}
	})
	select {
	case <-tail.Ready():
	case <-testCtx(t).Done():
		t.Fatal("tail never became ready")
	}
}

// abortTransaction writes a transaction to every partition and aborts it.
func abortTransaction(t *testing.T, kc kafka.Config, topic string) {
	t.Helper()
	cl, err := kafka.NewClient(kc, kgo.TransactionalID(kafkatest.UniqueName(t)+"-abort"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for i := range 9 {
		rec := &kgo.Record{Topic: topic, Key: fmt.Appendf(nil, "run_%d", i), Value: fmt.Appendf(nil, "aborted-%d", i)}
		if err := cl.ProduceSync(testCtx(t), rec).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	if err := cl.EndTransaction(testCtx(t), kgo.TryAbort); err != nil {
		t.Fatal(err)
	}
}
