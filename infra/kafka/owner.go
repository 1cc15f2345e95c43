package kafka

import (
	"context"
	"errors"

	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"
)

// Handler is what an Owner drives: the executor.
type Handler interface {
	// Assigned is called when p becomes owned, after p's previous writer was
	// fenced. The handler restores its state and says where the commands it
	// has not consumed begin: either it calls replay, which streams every
	// committed event of the partition from its start and resumes after the
	// last command whose offset their headers carry, or it calls p.ResumeAt
	// with that offset (read from a checkpoint). Commands for p are
	// delivered only after Assigned returns nil.
	Assigned(ctx context.Context, p *Partition, replay func(fn func(Record) error) error) error
	// Commands delivers polled command records of an owned partition, in offset order.
	Commands(p int32, recs []Record)
	// Revoked is called when p is no longer owned. After it returns the
	// handler must not use p's Partition.
	Revoked(p int32)
}

// DefaultExecutorGroup is the executors' consumer group, and the prefix of
// their transactional ids, unless configured otherwise.
const DefaultExecutorGroup = "xbot-executor"

// OwnerConfig configures an Owner.
type OwnerConfig struct {
	// Kafka is the cluster and topic naming. Required.
	Kafka Config
	// Group is the consumer group of executors. Default
	// Kafka.Group(DefaultExecutorGroup): "xbot-executor" under the group prefix.
	Group string
	// TxnIDPrefix prefixes the per-partition transactional ids; every
	// executor of one deployment must use the same prefix, or fencing breaks.
	// Default Kafka.Group(DefaultExecutorGroup).
	TxnIDPrefix string
	// Logger is required.
	Logger *zap.Logger
	// RestartBackoff is the pause before a failed session restarts. Default 1 s.
	RestartBackoff time.Duration
	// SessionTimeout of the group member. Default 10 s: short enough that a
	// crashed executor's partitions move on quickly, long enough for GC pauses.
	SessionTimeout time.Duration
	// Hooks inject faults in tests. Nil in production.
	Hooks *Hooks
}

func (c *OwnerConfig) setDefaults() {
	c.Kafka.setDefaults()
	if c.Group == "" {
		c.Group = c.Kafka.Group(DefaultExecutorGroup)
	}
	if c.TxnIDPrefix == "" {
		c.TxnIDPrefix = c.Kafka.Group(DefaultExecutorGroup)
	}
	if c.RestartBackoff == 0 {
		c.RestartBackoff = time.Second
	}
	if c.SessionTimeout == 0 {
		c.SessionTimeout = 10 * time.Second
	}
}

// Validate reports every configuration problem.
func (c OwnerConfig) Validate() error {
	var errs []error
	if err := c.Kafka.Validate(); err != nil {
		errs = append(errs, err)
	}
	if c.Logger == nil {
		errs = append(errs, errors.New("owner: Logger is required"))
	}
	return errors.Join(errs...)
}

// Owner joins the executor consumer group and, for every partition it is
// assigned, becomes the single transactional writer of the same partition of
// the events topic.
type Owner struct {
	cfg OwnerConfig
	h   Handler
	log *zap.Logger

	mu     sync.Mutex
	parts  map[int32]*Partition
	next   map[int32]int64 // next command offset per owned partition
	cancel context.CancelFunc
	killed bool
	client *kgo.Client
}

// NewOwner returns an Owner driving h.
func NewOwner(cfg OwnerConfig, h Handler) (*Owner, error) {
	if h == nil {
		panic("kafka.NewOwner: nil handler")
	}
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Owner{cfg: cfg, h: h, log: cfg.Logger}, nil
}

// Run consumes until ctx is done. A session that fails (an append error, a
// fenced producer) is torn down and restarted, so the group reassigns its
// partitions and whoever owns them next rebuilds from the committed log.
func (o *Owner) Run(ctx context.Context) error {
	for {
		err := o.session(ctx)
		if ctx.Err() != nil || o.isKilled() {
			return nil
		}
		o.log.Warn("executor session ended; restarting", zap.Error(err), zap.Duration("backoff", o.cfg.RestartBackoff))
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(o.cfg.RestartBackoff):
		}
	}
}

func (o *Owner) isKilled() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.killed
}

func (o *Owner) session(ctx context.Context) error {
	sctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	cl, err := NewClient(o.cfg.Kafka,
		kgo.ConsumerGroup(o.cfg.Group),
		kgo.ConsumeTopics(o.cfg.Kafka.CommandsTopic()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.DisableAutoCommit(),
		kgo.BlockRebalanceOnPoll(),
		kgo.SessionTimeout(o.cfg.SessionTimeout),
		kgo.OnPartitionsAssigned(o.assigned(sctx, cancel)),
		kgo.OnPartitionsRevoked(o.revoked),
		kgo.OnPartitionsLost(o.revoked),
		kgo.AdjustFetchOffsetsFn(o.adjust),
	)
	if err != nil {
		return err
	}
	o.mu.Lock()
	o.parts, o.next, o.client = map[int32]*Partition{}, map[int32]int64{}, cl
	o.cancel = func() { cancel(errors.New("killed")) }
	o.mu.Unlock()
	defer o.closeSession(cl)
	for {
		fs := cl.PollFetches(sctx)
		if sctx.Err() != nil || fs.IsClientClosed() {
			return context.Cause(sctx)
		}
		fs.EachError(func(t string, p int32, err error) {
			o.log.Warn("fetch error", zap.String("topic", t), zap.Int32("partition", p), zap.Error(err))
		})
		fs.EachPartition(func(fp kgo.FetchTopicPartition) {
			o.deliver(fp)
		})
		cl.AllowRebalance()
	}
}

func (o *Owner) deliver(fp kgo.FetchTopicPartition) {
	if len(fp.Records) == 0 {
		return
	}
	recs := make([]Record, len(fp.Records))
	for i, r := range fp.Records {
		recs[i] = Record{Partition: r.Partition, Offset: r.Offset, Key: string(r.Key), Value: r.Value, Headers: headerMap(r.Headers)}
	}
	o.h.Commands(fp.Partition, recs)
}

func (o *Owner) closeSession(cl *kgo.Client) {
	o.mu.Lock()
	parts := make([]int32, 0, len(o.parts))
	for p := range o.parts {
		parts = append(parts, p)
	}
	killed := o.killed
	o.mu.Unlock()
	if !killed {
		o.revoked(context.Background(), nil, map[string][]int32{o.cfg.Kafka.CommandsTopic(): parts})
	}
	cl.CloseAllowingRebalance()
}

// Kill stops the owner as a crash would: producers are closed in the middle of
// whatever they were doing, with no transaction ended and no partition
// revoked from the handler. Tests use it to play a dying executor.
func (o *Owner) Kill() {
	o.mu.Lock()
	o.killed = true
	parts := make([]*Partition, 0, len(o.parts))
	for _, p := range o.parts {
		parts = append(parts, p)
	}
	cancel := o.cancel
	o.mu.Unlock()
	for _, p := range parts {
		p.kill()
	}
	if cancel != nil {
		cancel()
	}
}

// Assigned returns the partitions currently owned.
func (o *Owner) Assigned() []int32 {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make([]int32, 0, len(o.parts))
	for p := range o.parts {
		out = append(out, p)
	}
	return out
}

func (o *Owner) fatal(cancel context.CancelCauseFunc) func(error) {
	return func(err error) {
		o.log.Error("partition writer failed; giving up all partitions", zap.Error(err))
		cancel(err)
	}
}
