package kafka_test

import (
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/xbot-runtime/xbot/infra/devstack/kafkatest"
	"github.com/xbot-runtime/xbot/infra/kafka"
)

// A new owner rebuilds a partition by reading it up to its last stable
// offset right after initialising the partition's transactional id
// (ReadPartition's precondition). On Kafka 4.x the previous writer's last
// EndTxn may have returned before its commit markers were written; the
// initialisation must wait for them (the coordinator answers
// CONCURRENT_TRANSACTIONS until then), so the read sees that commit. Each
// round commits and takes over at once, with no wait in between.
func TestTakeoverRightAfterACommitReadsIt(t *testing.T) {
	t.Parallel()
	const rounds = 20
	kc := kafkatest.NewTopics(t, 1)
	txnID := kafkatest.UniqueName(t)
	var want []string
	for i := range rounds {
		v := fmt.Sprint("commit", i)
		writer := transactional(t, kc, txnID)
		if err := writer.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		rec := &kgo.Record{Topic: kc.EventsTopic(), Partition: 0, Key: []byte("run_t"), Value: []byte(v)}
		if err := writer.ProduceSync(testCtx(t), rec).FirstErr(); err != nil {
			t.Fatal(err)
		}
		if err := writer.EndTransaction(testCtx(t), kgo.TryCommit); err != nil {
			t.Fatal(err)
		}
		want = append(want, v)
		next := transactional(t, kc, txnID)
		if _, _, err := next.ProducerID(testCtx(t)); err != nil {
			t.Fatalf("round %d: initialise the next writer: %v", i, err)
		}
		got, _ := committedSoFar(t, kc, kc.EventsTopic(), 0)
		equal(t, fmt.Sprintf("round %d: read right after the takeover", i), got, want)
		writer.Close()
		next.Close()
	}
}

// transactional is a producer of partition-exact records under txnID.
func transactional(t *testing.T, kc kafka.Config, txnID string) *kgo.Client {
	t.Helper()
	cl, err := kafka.NewClient(kc, kgo.TransactionalID(txnID), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}
