package runner

import (
	"context"
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/kafka"
)

// fetchMaxWait caps how long the broker holds a fetch with no new data;
// 500 ms is the Java client's default (franz-go's is 5 s), so a record
// committed to an idle topic is projected within about that long.
const fetchMaxWait = 500 * time.Millisecond

// newConsumer returns the projector's consumer group member. It commits
// nothing by itself (the runner commits after a batch applied), and no
// partition is revoked between a poll and the commit of what it returned.
// A view that stores its own position (checkpoints not nil) resumes from it.
func newConsumer(cfg Config, checkpoints map[int32]int64) (*kgo.Client, error) {
	topic := cfg.Kafka.EventsTopic()
	opts := []kgo.Opt{
		kgo.ConsumerGroup(Group(cfg.Kafka, cfg.Projector.Name())),
		kgo.ConsumeTopics(topic),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		// Transaction markers come through so their offsets are committed
		// too; otherwise a group caught up on a transactional topic would
		// show a lag of one marker forever.
		kgo.KeepControlRecords(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxWait(fetchMaxWait),
		kgo.DisableAutoCommit(),
		kgo.BlockRebalanceOnPoll(),
	}
	if checkpoints != nil {
		opts = append(opts, kgo.AdjustFetchOffsetsFn(fromCheckpoints(topic, checkpoints)))
	}
	return kafka.NewClient(cfg.Kafka, append(opts, cfg.ClientOptions...)...)
}

// consume polls batches of at most MaxBatch records, projects each batch and
// then commits the polled offsets, until ctx ends. A batch not applied when
// ctx ends is not committed: the next owner of its partitions gets it again.
func (r *Runner) consume(ctx context.Context) error {
	for {
		fs := r.cl.PollRecords(ctx, r.cfg.MaxBatch)
		if ctx.Err() != nil {
			r.cl.AllowRebalance()
			return nil
		}
		if fs.IsClientClosed() {
			return errors.New("the Kafka client was closed")
		}
		observePoll(r.cfg.Projector.Name(), fs)
		fs.EachError(func(_ string, p int32, err error) {
			if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
				r.log.Error("fetch failed", zap.Int32("partition", p), zap.Error(err))
			}
		})
		if batch := decode(fs); r.project(ctx, batch) != nil {
			r.cl.AllowRebalance()
			return nil // only ctx ends a projection that has not applied
		}
		observeApplied(r.cfg.Projector.Name(), fs)
		if !fs.Empty() {
			if err := r.cl.CommitUncommittedOffsets(ctx); err != nil && ctx.Err() == nil {
				// The batch is applied; it is delivered again after a
				// rebalance or restart, and views apply idempotently.
				r.log.Warn("offset commit failed", zap.Error(err))
			}
		}
		r.cl.AllowRebalance()
	}
}

// decode turns the polled records into the batch, partition by partition in
// offset order. Transaction markers are left out; an undecodable record
// carries its PoisonError.
func decode(fs kgo.Fetches) []pending {
	var batch []pending
	fs.EachRecord(func(kr *kgo.Record) {
		if kr.Attrs.IsControl() {
			return
		}
		rec := Record{Record: kafka.Record{Partition: kr.Partition, Offset: kr.Offset, Key: string(kr.Key), Value: kr.Value,
			Headers: headers(kr)}}
		p := pending{rec: rec, topic: kr.Topic}
		env, err := events.Decode(kr.Value)
		if err != nil {
			p.bad = &PoisonError{Partition: kr.Partition, Offset: kr.Offset, RunID: string(kr.Key),
				Reason: "undecodable event: " + err.Error()}
		}
		p.rec.Event = env
		batch = append(batch, p)
	})
	return batch
}

func headers(kr *kgo.Record) map[string]string {
	if len(kr.Headers) == 0 {
		return nil
	}
	h := make(map[string]string, len(kr.Headers))
	for _, x := range kr.Headers {
		h[x.Key] = string(x.Value)
	}
	return h
}
