package kafka_test

import (
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/infra/devstack/kafkatest"
	"github.com/xbot-runtime/xbot/infra/kafka"
)

// tailed collects what a Tail delivered.
type tailed struct {
	mu   sync.Mutex
	recs []kafka.Record
}

func (c *tailed) deliver(recs []kafka.Record) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.recs = append(c.recs, recs...)
}

func (c *tailed) values() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, len(c.recs))
	for i, r := range c.recs {
		out[i] = string(r.Value)
	}
	return out
}

func startTail(t *testing.T, kc kafka.Config, topic string, c *tailed) *kafka.Tail {
	t.Helper()
	tail, err := kafka.NewTail(kafka.TailConfig{Kafka: kc, Topic: topic, Deliver: c.deliver, Logger: testLogger(t, "tail")})
	if err != nil {
		t.Fatal(err)
	}
	runTail(t, tail)
	return tail
}

func TestTailDeliversCommittedRecordsFromTheEnd(t *testing.T) {
	t.Parallel()
	kc := kafkatest.NewTopics(t, 3)
	topic := kc.EventsTopic()
	produceKeyed(t, kc, topic, "before", 20) // already in the topic: not delivered

	var got tailed
	startTail(t, kc, topic, &got)
	committed := produceTransactions(t, kc, topic)
	produceKeyed(t, kc, topic, "after", 14)

	eventually.Holds(t, waitTimeout, "every committed record", func() bool { return len(got.values()) >= committed+14 })
	vals := got.values()
	if len(vals) != committed+14 {
		t.Fatalf("delivered %d records, want %d", len(vals), committed+14)
	}
	for _, v := range vals {
		if strings.HasPrefix(v, "before") || strings.HasPrefix(v, "txn1-") {
			t.Errorf("delivered %q: records before the start and aborted records must not be", v)
		}
	}
	assertOffsetOrder(t, &got)
}

// assertOffsetOrder checks that every partition's records came in offset
// order without repeats.
func assertOffsetOrder(t *testing.T, c *tailed) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	last := map[int32]int64{}
	for _, r := range c.recs {
		if prev, ok := last[r.Partition]; ok && r.Offset <= prev {
			t.Errorf("partition %d: offset %d after %d", r.Partition, r.Offset, prev)
		}
		last[r.Partition] = r.Offset
	}
}

func TestTailsAreIndependent(t *testing.T) {
	t.Parallel()
	kc := kafkatest.NewTopics(t, 2)
	topic := kc.EventsTopic()
	var a, b tailed
	startTail(t, kc, topic, &a)
	startTail(t, kc, topic, &b)
	produceKeyed(t, kc, topic, "x", 10)
	eventually.Holds(t, waitTimeout, "both tails", func() bool { return len(a.values()) == 10 && len(b.values()) == 10 })
	av, bv := a.values(), b.values()
	slices.Sort(av)
	slices.Sort(bv)
	if !slices.Equal(av, bv) {
		t.Errorf("tails saw different records: %v vs %v", av, bv)
	}
}

func TestTailConfigValidate(t *testing.T) {
	t.Parallel()
	if _, err := kafka.NewTail(kafka.TailConfig{}); err == nil {
		t.Fatal("an empty config was accepted")
	}
}
