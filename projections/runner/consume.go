package runner

import (
	"context"
	"errors"
	"math"
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
		kgo.FetchMaxBytes(fetchBytes(cfg.MaxBatchBytes)),
		kgo.DisableAutoCommit(),
		kgo.BlockRebalanceOnPoll(),
	}
	if cfg.Linger > 0 {
		// A batch's worth of records, or Linger: whichever comes first.
		opts = append(opts, kgo.FetchMaxWait(cfg.Linger), kgo.FetchMinBytes(fetchBytes(cfg.MaxBatchBytes)))
	}
	if checkpoints != nil {
		opts = append(opts, kgo.AdjustFetchOffsetsFn(fromCheckpoints(topic, checkpoints)))
	}
	return kafka.NewClient(cfg.Kafka, append(opts, cfg.ClientOptions...)...)
}

// fetchBytes is the fetch size of a batch bound in bytes: Kafka's field is
// an int32, and a fetch below 1 KiB would only multiply round trips.
func fetchBytes(maxBatchBytes int) int32 {
	return int32(min(max(maxBatchBytes, 1<<10), math.MaxInt32)) //nolint:gosec // bounded just above
}

// rebalanceEvery bounds how long the runner goes on with records it took
// from the client's buffer while applying, without letting a rebalance in:
// a second, well inside franz-go's 60 s rebalance timeout, is a short wait
// for a member joining the group and a rare pause of the overlap.
const rebalanceEvery = time.Second

// polled is one poll, decoded: the batch to apply and, per partition, its
// last record (a transaction marker included), whose offsets are committed
// once the batch is applied.
type polled struct {
	batch []pending
	last  []*kgo.Record
	fs    kgo.Fetches // for the metrics of what was fetched
}

// consume polls at most MaxBatch records, projects them in batches of at
// most MaxBatchBytes and then commits their offsets, until ctx ends. While
// a poll is applied, the records the client has already fetched are taken
// and decoded: they are applied next, without a rebalance in between, so a
// partition is never revoked between a poll and the commit of what it
// returned. A rebalance is let in when the client has nothing buffered, and
// at least every rebalanceEvery. Records not applied when ctx ends are not
// committed: the next owner of their partitions gets them again.
func (r *Runner) consume(ctx context.Context) error {
	defer r.cl.AllowRebalance()
	allowed := time.Now()
	var cur *polled
	for {
		if cur == nil {
			fs := r.cl.PollRecords(ctx, r.cfg.MaxBatch)
			if ctx.Err() != nil {
				return nil
			}
			if fs.IsClientClosed() {
				return errors.New("the Kafka client was closed")
			}
			cur = r.decodePoll(fs)
		}
		var next chan *polled
		if time.Since(allowed) < rebalanceEvery {
			next = make(chan *polled, 1)
			go func() { next <- r.decodePoll(r.cl.PollRecords(nil, r.cfg.MaxBatch)) }() //nolint:staticcheck // a nil ctx takes only what is buffered
		}
		applied := r.projectPoll(ctx, cur)
		if next != nil {
			cur = <-next
		} else {
			cur = nil
		}
		if !applied {
			return nil // only ctx ends a projection that has not applied
		}
		if cur == nil || len(cur.last) == 0 {
			cur = nil
			r.cl.AllowRebalance()
			allowed = time.Now()
		}
	}
}

// projectPoll applies pl and commits its offsets; it returns false when ctx
// ended first.
func (r *Runner) projectPoll(ctx context.Context, pl *polled) bool {
	for _, batch := range split(pl.batch, r.cfg.MaxBatchBytes) {
		if r.project(ctx, batch) != nil {
			return false
		}
	}
	observeApplied(r.cfg.Projector.Name(), pl.fs)
	if len(pl.last) == 0 {
		return true
	}
	if err := r.cl.CommitRecords(ctx, pl.last...); err != nil && ctx.Err() == nil {
		// The batch is applied; it is delivered again after a rebalance or
		// restart, and views apply idempotently.
		r.log.Warn("offset commit failed", zap.Error(err))
	}
	return true
}

// decodePoll logs the fetch errors of fs and decodes its records.
func (r *Runner) decodePoll(fs kgo.Fetches) *polled {
	fs.EachError(func(_ string, p int32, err error) {
		if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
			r.log.Error("fetch failed", zap.Int32("partition", p), zap.Error(err))
		}
	})
	observePoll(r.cfg.Projector.Name(), fs)
	pl := &polled{batch: decode(fs), fs: fs}
	fs.EachPartition(func(p kgo.FetchTopicPartition) {
		if n := len(p.Records); n > 0 {
			pl.last = append(pl.last, p.Records[n-1])
		}
	})
	return pl
}

// decode turns the polled records into the batch, partition by partition in
// offset order. Transaction markers are left out; an undecodable record
// carries its PoisonError.
func decode(fs kgo.Fetches) []pending {
	batch := make([]pending, 0, fs.NumRecords())
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

// split cuts batch, in order, into batches whose record values add up to at
// most maxBytes; a larger record is a batch of its own.
func split(batch []pending, maxBytes int) [][]pending {
	var out [][]pending
	start, size := 0, 0
	for i, p := range batch {
		if i > start && size+len(p.rec.Value) > maxBytes {
			out = append(out, batch[start:i:i])
			start, size = i, 0
		}
		size += len(p.rec.Value)
	}
	if start < len(batch) {
		out = append(out, batch[start:])
	}
	return out
}
