package wmkafka

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/xbot-runtime/xbot/infra/kafka"
)

// fetchMaxWait caps how long the broker holds a fetch with no new data. A
// partition resumed after back-pressure (worker.go) joins the next fetch only
// after the one in flight returns, so this bounds that stall; 500 ms is the
// Java client's default (franz-go's is 5 s).
const fetchMaxWait = 500 * time.Millisecond

// subscription is one Subscribe call: a franz-go consumer, a poll loop that
// hands records to one worker per partition, and the Acked offsets not yet
// committed.
type subscription struct {
	cfg   SubscriberConfig
	topic string
	group bool
	ctx   context.Context
	cl    *kgo.Client
	out   chan *message.Message
	log   watermill.LoggerAdapter

	mu      sync.Mutex
	workers map[int32]*worker
	acked   map[int32]kgo.EpochOffset // next offset to commit, per partition
}

func newSubscription(ctx context.Context, cfg SubscriberConfig, topic string) (*subscription, error) {
	s := &subscription{
		cfg:     cfg,
		topic:   topic,
		group:   cfg.ConsumerGroup != "",
		ctx:     ctx,
		out:     make(chan *message.Message),
		log:     cfg.Logger.With(watermill.LogFields{"topic": topic, "consumer_group": cfg.ConsumerGroup}),
		workers: map[int32]*worker{},
		acked:   map[int32]kgo.EpochOffset{},
	}
	opts := []kgo.Opt{
		kgo.ConsumeTopics(topic),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		// Control records (transaction markers) come through so their
		// offsets are committed too; otherwise a group caught up on a
		// transactional topic would show a lag of one marker forever.
		kgo.KeepControlRecords(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxWait(fetchMaxWait),
	}
	if s.group {
		opts = append(opts,
			kgo.ConsumerGroup(cfg.ConsumerGroup),
			kgo.DisableAutoCommit(),
			// Rebalance callbacks run only between polls, so records polled
			// before a revoke are never handed out after it.
			kgo.BlockRebalanceOnPoll(),
			kgo.OnPartitionsRevoked(s.onRevoked),
			kgo.OnPartitionsLost(s.onLost),
		)
	}
	cl, err := kafka.NewClient(cfg.Kafka, append(opts, cfg.ClientOptions...)...)
	if err != nil {
		return nil, err
	}
	s.cl = cl
	return s, nil
}

// run polls until the subscription's context ends, then stops the workers,
// commits what was Acked, leaves the group and closes out.
func (s *subscription) run() {
	defer close(s.out)
	s.poll()
	s.stopWorkers(nil)
	if s.group {
		ctx, cancel := context.WithTimeout(context.Background(), s.cfg.CloseTimeout)
		s.commit(ctx, nil, false)
		cancel()
	}
	s.cl.CloseAllowingRebalance()
	s.log.Debug("subscription closed", nil)
}

func (s *subscription) poll() {
	lastCommit := time.Now()
	for {
		fs := s.pollOnce()
		if s.ctx.Err() != nil || fs.IsClientClosed() {
			s.cl.AllowRebalance()
			return
		}
		fs.EachError(func(_ string, p int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
				s.log.Error("fetch failed", err, watermill.LogFields{"partition": p})
			}
		})
		fs.EachPartition(s.dispatch)
		if s.group && time.Since(lastCommit) >= s.cfg.CommitInterval {
			// Between poll and AllowRebalance no partition can be revoked,
			// so every offset committed here belongs to a partition we own.
			s.commit(s.ctx, nil, true)
			lastCommit = time.Now()
		}
		s.cl.AllowRebalance()
	}
}

// pollOnce waits for records; in a group it wakes every CommitInterval so
// Acked offsets are committed even when no records arrive.
func (s *subscription) pollOnce() kgo.Fetches {
	if !s.group {
		return s.cl.PollFetches(s.ctx)
	}
	ctx, cancel := context.WithTimeout(s.ctx, s.cfg.CommitInterval)
	defer cancel()
	return s.cl.PollFetches(ctx)
}

func (s *subscription) dispatch(p kgo.FetchTopicPartition) {
	if len(p.Records) == 0 {
		return
	}
	s.mu.Lock()
	w := s.workers[p.Partition]
	if w == nil {
		w = newWorker(s, p.Partition)
		s.workers[p.Partition] = w
	}
	s.mu.Unlock()
	w.push(p.Records)
}

// stopWorkers stops the workers of partitions (all when nil) and waits for
// them; their in-flight messages' contexts are cancelled.
func (s *subscription) stopWorkers(partitions []int32) {
	s.mu.Lock()
	var stopping []*worker
	for p, w := range s.workers {
		if partitions == nil || slices.Contains(partitions, p) {
			stopping = append(stopping, w)
			delete(s.workers, p)
		}
	}
	s.mu.Unlock()
	for _, w := range stopping {
		w.stop()
	}
}
