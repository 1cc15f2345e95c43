package runner

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/ThreeDotsLabs/watermill/message/router/middleware"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/infra/kafka/wmkafka"
)

// Dead-letter headers naming why and where a record
// was dead-lettered.
const (
	HeaderProjector = "xbot-projector"
	HeaderReason    = middleware.ReasonForPoisonedKey
	HeaderRunID     = "xbot-run-id"
	HeaderSeq       = "xbot-seq"
	HeaderPartition = "xbot-partition"
	HeaderOffset    = "xbot-offset"
)

// Config configures a projector runner.
type Config struct {
	// Kafka is the cluster. Required.
	Kafka kafka.Config
	// Projector is the view. Required.
	Projector Projector
	// Logger is required.
	Logger *zap.Logger
	// Heartbeat, when set, is called every HeartbeatEvery (default 2 s) so
	// readers can tell the projector is alive.
	Heartbeat      func(ctx context.Context) error
	HeartbeatEvery time.Duration
	// MaxBatch bounds the records of one poll, and so of one Apply.
	// Default DefaultMaxBatch.
	MaxBatch int
	// MaxBatchBytes bounds the record values of one Apply: a poll holding
	// more is applied as several batches, each within the bound (a single
	// larger record is a batch of its own), before its offsets are
	// committed. It also caps each fetch from a broker. Default
	// DefaultMaxBatchBytes.
	MaxBatchBytes int
	// Linger, when positive, lets records gather for up to this long before
	// they are applied: the broker holds each fetch until MaxBatchBytes of
	// records are ready or Linger has passed. It suits a view whose write
	// costs about the same whatever its size (a ClickHouse insert), at the
	// price of up to Linger more lag. Zero applies records as soon as they
	// arrive (a fetch of an idle topic still waits up to 500 ms). At most
	// MaxLinger.
	Linger time.Duration
	// Retry bounds the backoff between attempts at a failing batch
	// (default 100 ms doubling to 10 s). A failing record is retried for as
	// long as it fails: the projector stops rather than skipping it.
	RetryInitial, RetryMax time.Duration
	// ClientOptions are extra franz-go options (tests).
	ClientOptions []kgo.Opt
}

// Batch bounds by default. A batch is one transaction of the Postgres view
// and one insert per ClickHouse table, so larger batches cost less per
// event; 10,000 events of ~500 bytes are ~5 MB, which a view holds in memory
// without trouble, and a transaction that size commits in tens of
// milliseconds, so a projector's lag stays far below a second.
const (
	DefaultMaxBatch      = 10_000
	DefaultMaxBatchBytes = 8 << 20
)

// MaxLinger bounds Config.Linger: a fetch the broker holds longer would
// only delay a view that is meant to be read.
const MaxLinger = 30 * time.Second

// Group returns the consumer group of the projector named name on kc:
// "xbot-projector-<name>" under kc's group prefix.
func Group(kc kafka.Config, name string) string { return kc.Group("xbot-projector-" + name) }

// Validate reports every configuration problem.
func (c Config) Validate() error {
	var errs []error
	if err := c.Kafka.Validate(); err != nil {
		errs = append(errs, err)
	}
	if c.Projector == nil || c.Logger == nil {
		errs = append(errs, errors.New("projector runner: Projector and Logger are required"))
	}
	if c.MaxBatch < 0 || c.MaxBatchBytes < 0 {
		errs = append(errs, fmt.Errorf("projector runner: MaxBatch (%d) and MaxBatchBytes (%d) must not be negative",
			c.MaxBatch, c.MaxBatchBytes))
	}
	if c.Linger < 0 || c.Linger > MaxLinger {
		errs = append(errs, fmt.Errorf("projector runner: Linger (%s) must be between 0 and %s", c.Linger, MaxLinger))
	}
	return errors.Join(errs...)
}

func (c *Config) setDefaults() {
	c.Kafka = c.Kafka.WithDefaults()
	if c.HeartbeatEvery == 0 {
		c.HeartbeatEvery = 2 * time.Second
	}
	if c.MaxBatch == 0 {
		c.MaxBatch = DefaultMaxBatch
	}
	if c.MaxBatchBytes == 0 {
		c.MaxBatchBytes = DefaultMaxBatchBytes
	}
	if c.RetryInitial == 0 {
		c.RetryInitial = 100 * time.Millisecond
	}
	if c.RetryMax == 0 {
		c.RetryMax = 10 * time.Second
	}
}

// Runner runs one projector: a consumer group on the events topic
// (read_committed), handed whole polled batches; the group's offsets are
// committed only after the view applied the batch. A failing batch is retried
// with backoff, and records that can never be applied go to the dead-letter
// topic.
type Runner struct {
	cfg     Config
	log     *zap.Logger
	cl      *kgo.Client
	pub     *wmkafka.Publisher
	running chan struct{}

	mu      sync.Mutex
	stopped map[string]int64 // run id → seq at which its projection stopped
	// generation is the latest rebuild from the beginning found in the
	// dead-letter topic; this runner's dead letters carry it.
	generation int64
}

// New prepares a runner: it reads the dead-letter topic to learn which runs
// this projector stopped earlier, so a restart does not resume them past
// their gap.
func New(ctx context.Context, cfg Config) (*Runner, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	name := cfg.Projector.Name()
	r := &Runner{cfg: cfg, log: cfg.Logger.With(zap.String("projector", name)), stopped: map[string]int64{},
		running: make(chan struct{})}
	if err := r.loadStopped(ctx); err != nil {
		return nil, err
	}
	checkpoints, err := cfg.Projector.Checkpoints(ctx)
	if err != nil {
		return nil, fmt.Errorf("projector %s: checkpoints: %w", name, err)
	}
	if r.cl, err = newConsumer(cfg, checkpoints); err != nil {
		return nil, fmt.Errorf("projector %s: %w", name, err)
	}
	wlog := wmkafka.NewZapLogger(r.log.Named("watermill"))
	if r.pub, err = wmkafka.NewPublisher(wmkafka.PublisherConfig{Kafka: cfg.Kafka, Logger: wlog}); err != nil {
		r.cl.Close()
		return nil, err
	}
	return r, nil
}

// fromCheckpoints starts each partition at the view's own stored position;
// a partition the view has never seen starts at the beginning.
func fromCheckpoints(topic string, next map[int32]int64) func(context.Context, map[string]map[int32]kgo.Offset) (map[string]map[int32]kgo.Offset, error) {
	return func(_ context.Context, offs map[string]map[int32]kgo.Offset) (map[string]map[int32]kgo.Offset, error) {
		for p := range offs[topic] {
			if o, ok := next[p]; ok {
				offs[topic][p] = kgo.NewOffset().At(o)
			} else {
				offs[topic][p] = kgo.NewOffset().AtStart()
			}
		}
		return offs, nil
	}
}

func stoppedReason(seq int64) string {
	return fmt.Sprintf("the run's projection stopped at seq %d", seq)
}

func (r *Runner) isStopped(runID string) (int64, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	at, ok := r.stopped[runID]
	return at, ok
}

func (r *Runner) markStopped(runID string, seq int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.stopped[runID]; !ok && runID != "" {
		r.stopped[runID] = seq
	}
}

// Run projects until ctx is done. It returns nil when ctx ended, and an
// error only when the consumer cannot go on.
func (r *Runner) Run(ctx context.Context) error {
	hctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if r.cfg.Heartbeat != nil {
		go heartbeat(hctx, r.cfg, r.log)
	}
	close(r.running)
	err := r.consume(ctx)
	r.cl.CloseAllowingRebalance()
	_ = r.pub.Close()
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// Running is closed once Run started consuming.
func (r *Runner) Running() chan struct{} { return r.running }

// TopicLag is how far a projector's consumer group is behind a topic.
type TopicLag struct {
	Topic string
	// Partitions maps each partition to its last stable offset minus the
	// group's committed offset; a partition the group never committed counts
	// from the log start. These are offsets, not events: transaction markers
	// take offsets too, so a caught-up projector shows 0 only once it
	// committed past the trailing marker (the runner does).
	Partitions map[int32]int64
}

// Total is the lag summed over all partitions.
func (l TopicLag) Total() int64 {
	var n int64
	for _, v := range l.Partitions {
		n += v
	}
	return n
}

// Lag returns how many offsets of the events topic the projector's consumer
// group has not committed yet (per partition and in total).
func (r *Runner) Lag(ctx context.Context) (TopicLag, error) {
	topic := r.cfg.Kafka.EventsTopic()
	parts, err := kafka.GroupLag(ctx, r.cfg.Kafka, Group(r.cfg.Kafka, r.cfg.Projector.Name()), topic)
	if err != nil {
		return TopicLag{}, err
	}
	return TopicLag{Topic: topic, Partitions: parts}, nil
}

// Stopped returns the runs whose projection stopped at a poison record, with
// the seq it stopped at.
func (r *Runner) Stopped() map[string]int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]int64, len(r.stopped))
	for k, v := range r.stopped {
		out[k] = v
	}
	return out
}

// loadStopped rebuilds the stopped runs from this projector's dead letters
// of the current generation (see HeaderGeneration).
func (r *Runner) loadStopped(ctx context.Context) error {
	if err := kafka.EnsureTopics(ctx, r.cfg.Kafka); err != nil {
		return err
	}
	type letter struct {
		run      string
		seq, gen int64
	}
	var letters []letter
	err := kafka.ReadTopic(ctx, r.cfg.Kafka, r.cfg.Kafka.DeadLetterTopic(), func(rec kafka.Record) error {
		h := rec.Headers
		if h[HeaderProjector] != r.cfg.Projector.Name() {
			return nil
		}
		gen, _ := strconv.ParseInt(h[HeaderGeneration], 10, 64)
		if h[HeaderReset] == "true" {
			r.generation = max(r.generation, gen)
			return nil
		}
		if h[HeaderRunID] != "" {
			seq, _ := strconv.ParseInt(h[HeaderSeq], 10, 64)
			letters = append(letters, letter{run: h[HeaderRunID], seq: seq, gen: gen})
		}
		return nil
	})
	for _, l := range letters {
		if _, ok := r.stopped[l.run]; !ok && l.gen >= r.generation {
			r.stopped[l.run] = l.seq
		}
	}
	return err
}

func heartbeat(ctx context.Context, cfg Config, log *zap.Logger) {
	t := time.NewTicker(cfg.HeartbeatEvery)
	defer t.Stop()
	for {
		if err := cfg.Heartbeat(ctx); err != nil && ctx.Err() == nil {
			log.Warn("projector heartbeat failed", zap.Error(err))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Close releases a runner that was never Run.
func (r *Runner) Close() error {
	r.cl.Close()
	return r.pub.Close()
}
