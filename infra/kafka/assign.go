package kafka

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
	"go.uber.org/zap"
)

// assigned fences and rebuilds newly assigned partitions in parallel. It runs
// inside the rebalance, so it counts against the rebalance timeout.
func (o *Owner) assigned(sctx context.Context, cancel context.CancelCauseFunc) func(context.Context, *kgo.Client, map[string][]int32) {
	return func(_ context.Context, _ *kgo.Client, assigned map[string][]int32) {
		var wg sync.WaitGroup
		for _, p := range assigned[o.cfg.Kafka.CommandsTopic()] {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := o.take(sctx, p, cancel); err != nil {
					o.log.Error("taking partition failed; restarting session", zap.Int32("partition", p), zap.Error(err))
					cancel(err)
				}
			}()
		}
		wg.Wait()
		o.log.Info("partitions assigned", zap.Int32s("partitions", assigned[o.cfg.Kafka.CommandsTopic()]))
	}
}

// take becomes the writer of p: initialising the transactional producer bumps
// the epoch, which aborts the previous writer's open transaction and fences it
// for good; only then is the log read, so the read sees everything that will
// ever commit from earlier owners.
func (o *Owner) take(ctx context.Context, p int32, cancel context.CancelCauseFunc) error {
	prod, err := NewClient(o.cfg.Kafka, append([]kgo.Opt{
		kgo.TransactionalID(TransactionalID(o.cfg.TxnIDPrefix, p)),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerLinger(0),
	}, WriterTuning(o.cfg.Kafka)...)...)
	if err != nil {
		return err
	}
	if _, _, err := prod.ProducerID(ctx); err != nil {
		prod.Close()
		return fmt.Errorf("init producer for partition %d: %w", p, err)
	}
	if err := learnTopic(ctx, prod, o.cfg.Kafka.EventsTopic()); err != nil {
		prod.Close()
		return fmt.Errorf("init producer for partition %d: %w", p, err)
	}
	counts := map[string]int{}
	for _, topic := range []string{o.cfg.Kafka.CommandsTopic(), o.cfg.Kafka.DeadLetterTopic(), o.cfg.Kafka.CheckpointsTopic()} {
		if counts[topic], err = learnWritable(ctx, prod, topic); err != nil {
			prod.Close()
			return fmt.Errorf("init producer for partition %d: %w", p, err)
		}
	}
	part := &Partition{id: p, topic: o.cfg.Kafka.EventsTopic(), prod: prod, onFatal: o.fatal(cancel), hooks: o.cfg.Hooks,
		counts: counts, cmdTopic: o.cfg.Kafka.CommandsTopic(), resumeAt: -1, ends: map[string]int64{}}
	replay := func(fn func(Record) error) error {
		maxCmd, err := ReadPartition(ctx, o.cfg.Kafka, o.cfg.Kafka.EventsTopic(), p, fn)
		part.ResumeAt(maxCmd + 1)
		return err
	}
	if err := o.h.Assigned(ctx, part, replay); err != nil {
		prod.Close()
		return fmt.Errorf("rebuild partition %d: %w", p, err)
	}
	next := part.resumeAt
	o.mu.Lock()
	if o.killed {
		o.mu.Unlock()
		prod.Close()
		return fmt.Errorf("take partition %d: owner killed", p)
	}
	o.parts[p], o.next[p] = part, next
	o.mu.Unlock()
	o.log.Debug("partition assigned", zap.Int32("partition", p), zap.Int64("next_command_offset", next))
	return nil
}

// partitionMetadataMinAge is the shortest time between two metadata
// refreshes of a partition writer's producer: 100 ms, the Java client's
// retry.backoff.ms, instead of franz-go's 5 s. On Kafka 4.x (KIP-890) the
// first produce of a transaction begun right after the previous commit may
// be refused with CONCURRENT_TRANSACTIONS while the commit's markers are
// still being written (the broker itself retries for 100 ms first);
// franz-go v1.22.3 retries such a produce only after a metadata refresh, so
// with the default a second refusal within 5 s of the first stalled the
// partition's appends for the rest of those 5 s. Leader changes are learnt
// as soon, too.
const partitionMetadataMinAge = 100 * time.Millisecond

// WriterTuning returns the producer options the partition writers of c set
// beyond franz-go's defaults, for raw baselines that are to be measured the
// same way: metadata refreshed soon (partitionMetadataMinAge) and, with
// transaction version 1, the protocol versions below KIP-890 part 2 and a
// short backoff after CONCURRENT_TRANSACTIONS (txnBackoff).
func WriterTuning(c Config) []kgo.Opt {
	opts := []kgo.Opt{kgo.MetadataMinAge(partitionMetadataMinAge)}
	if c.WithDefaults().TransactionVersion == 1 {
		opts = append(opts, kgo.MaxVersions(transactionVersion1()), kgo.ConcurrentTransactionsBackoff(txnBackoff))
	}
	return opts
}

// transactionVersion1 is franz-go's stable request versions with Produce,
// EndTxn and TxnOffsetCommit below the versions of KIP-890 part 2 (12, 5
// and 5): franz-go then adds partitions with AddPartitionsToTxn, whatever
// the cluster's transaction.version.
//
// Why: under part 2 the first produce of a transaction begun right after a
// commit is refused with CONCURRENT_TRANSACTIONS until the commit's markers
// are written; the broker retries it for up to 100 ms and franz-go retries
// after its next metadata refresh. Under version 1 the refusal comes to
// AddPartitionsToTxn, which franz-go retries after txnBackoff. On the
// three-broker Apache Kafka 4.4 of the tests, a one-record transaction took
// p50 48-52 ms (p99 75-92) with part 2 and 17-33 ms (p99 43-96) this way
// (BenchmarkRawTransactionLatency, 3 pairs of 300; docs/kafka.md).
func transactionVersion1() *kversion.Versions {
	vs := kversion.Stable()
	vs.SetMaxKeyVersion(int16(kmsg.Produce), 11)
	vs.SetMaxKeyVersion(int16(kmsg.EndTxn), 4)
	vs.SetMaxKeyVersion(int16(kmsg.TxnOffsetCommit), 4)
	return vs
}

// txnBackoff is the wait before a transactional request refused with
// CONCURRENT_TRANSACTIONS is sent again (franz-go's default is 20 ms, and
// it grows the wait while the refusals last): the refusal lasts until the
// previous commit's markers are written, a few milliseconds on a healthy
// cluster.
const txnBackoff = 5 * time.Millisecond

// TransactionalID is the transactional id of partition p's writer for the
// executors' prefix: one id per partition, so the next owner's initialisation
// fences the previous one.
func TransactionalID(prefix string, p int32) string { return fmt.Sprintf("%s-p%d", prefix, p) }

// adjust starts consuming each assigned commands partition right after the
// last command whose effects are in the log, ignoring group offsets.
func (o *Owner) adjust(_ context.Context, offsets map[string]map[int32]kgo.Offset) (map[string]map[int32]kgo.Offset, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for p := range offsets[o.cfg.Kafka.CommandsTopic()] {
		off := kgo.NewOffset().AtStart()
		if n, ok := o.next[p]; ok && n > 0 {
			off = kgo.NewOffset().At(n).WithEpoch(-1)
		}
		offsets[o.cfg.Kafka.CommandsTopic()][p] = off
	}
	return offsets, nil
}

// revoked hands partitions back: the handler stops its runs first, then the
// writer closes (waiting for an in-flight append to finish).
func (o *Owner) revoked(_ context.Context, _ *kgo.Client, revoked map[string][]int32) {
	if o.isKilled() {
		return // a crashed process revokes nothing; Kill closed the producers
	}
	for _, p := range revoked[o.cfg.Kafka.CommandsTopic()] {
		o.mu.Lock()
		part, ok := o.parts[p]
		delete(o.parts, p)
		delete(o.next, p)
		o.mu.Unlock()
		if !ok {
			continue
		}
		part.revoking()
		o.h.Revoked(p)
		part.close()
		o.log.Debug("partition revoked", zap.Int32("partition", p))
	}
}

// learnTopic makes prod load topic's partitions before its first real
// transaction. franz-go v1.22.3 loads a topic on the first produce to it and
// publishes the partitions only after it has handed the buffered records to
// them; if that record's produce and the caller's EndTransaction(TryCommit)
// both finish inside that window, EndTransaction finds no partition in the
// transaction, aborts it and returns nil: a "committed" append that never
// committed. A record with an invalid partition loads the topic and fails in
// the client, so nothing reaches the log; the empty transaction is aborted.
func learnTopic(ctx context.Context, prod *kgo.Client, topic string) error {
	if err := prod.BeginTransaction(); err != nil {
		return err
	}
	_ = prod.ProduceSync(ctx, &kgo.Record{Topic: topic, Partition: -1}).FirstErr() // fails by design
	return prod.EndTransaction(ctx, kgo.TryAbort)
}

// learnWritable prepares prod to write topic in its transactions (commands:
// a follow-up creates its next run by a command in the same transaction;
// dead letters: a command record the executor refuses) and returns the
// topic's partition count.
func learnWritable(ctx context.Context, prod *kgo.Client, topic string) (int, error) {
	if err := learnTopic(ctx, prod, topic); err != nil {
		return 0, err
	}
	md, err := kadm.NewClient(prod).Metadata(ctx, topic)
	if err != nil {
		return 0, fmt.Errorf("metadata of %s: %w", topic, err)
	}
	td, ok := md.Topics[topic]
	switch {
	case !ok:
		return 0, fmt.Errorf("metadata of %s: topic missing", topic)
	case td.Err != nil:
		return 0, fmt.Errorf("metadata of %s: %w", topic, td.Err)
	case len(td.Partitions) == 0:
		return 0, fmt.Errorf("metadata of %s: no partitions", topic)
	}
	return len(td.Partitions), nil
}
