package kafka

import (
	"context"
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"
)

// ConsumerConfig configures a checkpointed consumer: a consumer group member
// whose positions live in the view it writes, not in Kafka.
type ConsumerConfig struct {
	// Kafka is the cluster. Required.
	Kafka Config
	// Group is the consumer group. Required.
	Group string
	// Topic is consumed with read_committed. Required.
	Topic string
	// Checkpoints returns the next offset per partition as stored with the
	// view's writes. Partitions without a checkpoint start at the beginning.
	Checkpoints func(ctx context.Context) (map[int32]int64, error)
	// Apply writes a batch to the view together with its checkpoint. It must
	// be idempotent: after a crash a batch may be applied again. A failing
	// batch is retried with backoff until it succeeds; nothing is skipped.
	Apply func(ctx context.Context, recs []Record) error
	// Logger is required.
	Logger *zap.Logger
	// MaxBackoff caps the retry backoff. Default 5 s.
	MaxBackoff time.Duration
}

// Validate reports every configuration problem.
func (c ConsumerConfig) Validate() error {
	var errs []error
	if err := c.Kafka.Validate(); err != nil {
		errs = append(errs, err)
	}
	if c.Group == "" || c.Topic == "" {
		errs = append(errs, errors.New("consumer: Group and Topic are required"))
	}
	if c.Checkpoints == nil || c.Apply == nil || c.Logger == nil {
		errs = append(errs, errors.New("consumer: Checkpoints, Apply and Logger are required"))
	}
	return errors.Join(errs...)
}

// RunConsumer consumes until ctx is done.
func RunConsumer(ctx context.Context, cfg ConsumerConfig) error {
	cfg.Kafka.setDefaults()
	if cfg.MaxBackoff == 0 {
		cfg.MaxBackoff = 5 * time.Second
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	cl, err := NewClient(cfg.Kafka,
		kgo.ConsumerGroup(cfg.Group),
		kgo.ConsumeTopics(cfg.Topic),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.DisableAutoCommit(),
		kgo.BlockRebalanceOnPoll(),
		kgo.AdjustFetchOffsetsFn(func(ctx context.Context, offs map[string]map[int32]kgo.Offset) (map[string]map[int32]kgo.Offset, error) {
			return adjustToCheckpoints(ctx, cfg, offs)
		}),
	)
	if err != nil {
		return err
	}
	defer cl.CloseAllowingRebalance()
	for {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil || fs.IsClientClosed() {
			return nil
		}
		fs.EachError(func(t string, p int32, err error) {
			cfg.Logger.Warn("fetch error", zap.String("topic", t), zap.Int32("partition", p), zap.Error(err))
		})
		var recs []Record
		fs.EachRecord(func(r *kgo.Record) {
			recs = append(recs, Record{Partition: r.Partition, Offset: r.Offset, Key: string(r.Key), Value: r.Value})
		})
		if len(recs) > 0 && !applyWithRetry(ctx, cfg, recs) {
			return nil
		}
		cl.AllowRebalance()
	}
}

func adjustToCheckpoints(ctx context.Context, cfg ConsumerConfig, offs map[string]map[int32]kgo.Offset) (map[string]map[int32]kgo.Offset, error) {
	cps, err := cfg.Checkpoints(ctx)
	if err != nil {
		return nil, err
	}
	for p := range offs[cfg.Topic] {
		off := kgo.NewOffset().AtStart()
		if n, ok := cps[p]; ok {
			off = kgo.NewOffset().At(n).WithEpoch(-1)
		}
		offs[cfg.Topic][p] = off
	}
	return offs, nil
}

// applyWithRetry returns false only when ctx ended before the batch applied.
func applyWithRetry(ctx context.Context, cfg ConsumerConfig, recs []Record) bool {
	backoff := 50 * time.Millisecond
	for {
		err := cfg.Apply(ctx, recs)
		if err == nil {
			return true
		}
		cfg.Logger.Error("applying batch failed; retrying", zap.String("group", cfg.Group),
			zap.Int("records", len(recs)), zap.Duration("backoff", backoff), zap.Error(err))
		select {
		case <-ctx.Done():
			return false
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, cfg.MaxBackoff)
	}
}
