package baseline

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/xbot-runtime/xbot/infra/kafka"
)

// RecordsPerTxn is how many records a Kafka baseline transaction holds:
// like BenchmarkRawTransactionalProduce, a poll's worth of an executor.
const RecordsPerTxn = 50

// Kafka produces every event's encoded envelope, keyed by run id, to topic
// with one franz-go transactional producer, RecordsPerTxn records per
// transaction, each committed before the next begins. The topic is created
// by the broker on first use. A failed transaction is aborted and ends the
// baseline.
// The client connects like every other xbot client (kc's brokers and
// security settings) and is tuned as the partition writers are
// (kafka.WriterTuning).
func Kafka(ctx context.Context, kc kafka.Config, topic string, evs []Event) (Result, error) {
	opts := append([]kgo.Opt{kgo.TransactionalID(topic + "-txn"), kgo.DefaultProduceTopic(topic), kgo.AllowAutoTopicCreation()},
		kafka.WriterTuning(kc)...)
	cl, err := kafka.NewClient(kc, opts...)
	if err != nil {
		return Result{}, fmt.Errorf("kafka baseline: client: %w", err)
	}
	defer cl.Close()
	start := time.Now()
	for _, batch := range batches(evs, RecordsPerTxn) {
		if err := produceTxn(ctx, cl, batch); err != nil {
			return Result{}, fmt.Errorf("kafka baseline: %w", err)
		}
	}
	return result(len(evs), time.Since(start)), nil
}

func produceTxn(ctx context.Context, cl *kgo.Client, batch []Event) error {
	if err := cl.BeginTransaction(); err != nil {
		return err
	}
	for _, e := range batch {
		cl.Produce(ctx, &kgo.Record{Key: []byte(e.RunID), Value: e.Raw}, nil)
	}
	commit := kgo.TryCommit
	if err := cl.Flush(ctx); err != nil {
		commit = kgo.TryAbort
	}
	if err := cl.EndTransaction(ctx, commit); err != nil {
		return err
	}
	if commit == kgo.TryAbort {
		return fmt.Errorf("flush failed; transaction aborted")
	}
	return nil
}
