package kafka

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"
)

// TailConfig configures a Tail.
type TailConfig struct {
	// Kafka is the cluster. Required.
	Kafka Config
	// Topic is read with read_committed. Required.
	Topic string
	// Deliver receives the records of each fetch, those of one partition in
	// offset order, from a single goroutine. It must not block for long: the
	// tail reads nothing while it runs. Required.
	Deliver func([]Record)
	// Logger is required.
	Logger *zap.Logger
}

// Validate reports every configuration problem.
func (c TailConfig) Validate() error {
	var errs []error
	if err := c.Kafka.Validate(); err != nil {
		errs = append(errs, err)
	}
	if c.Topic == "" || c.Deliver == nil || c.Logger == nil {
		errs = append(errs, errors.New("tail: Topic, Deliver and Logger are required"))
	}
	return errors.Join(errs...)
}

// Tail delivers the committed records of a topic from its end onwards: every
// record committed after Ready is closed is delivered exactly once per
// Tail, in offset order per partition; records of aborted transactions never
// are. It is not a consumer group member and commits nothing, so any number
// of processes can tail one topic, each seeing everything. Partitions added
// to the topic after Run started are not read.
//
// Barrier waits until the tail has delivered every record committed before
// the call: a read barrier for a process whose view of the topic is the
// tail's.
type Tail struct {
	cfg   TailConfig
	ready chan struct{}
	ends  endsFlights

	mu sync.Mutex
	// pos is each partition's next offset: every committed record below
	// it has been delivered (control records count, so a transaction's
	// commit or abort marker moves it to the last stable offset).
	pos map[int32]int64
	// moved is closed, and replaced, whenever pos advances.
	moved chan struct{}
	// admin lists the end offsets for Barrier, on the tail's client.
	admin *kadm.Client
}

// NewTail returns a tail; Run starts it.
func NewTail(cfg TailConfig) (*Tail, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	t := &Tail{cfg: cfg, ready: make(chan struct{}), pos: map[int32]int64{}, moved: make(chan struct{})}
	t.ends.list = t.stableEnds
	return t, nil
}

// Ready is closed once the tail knows where each partition ends: records
// committed from then on will be delivered.
func (t *Tail) Ready() <-chan struct{} { return t.ready }

// Run reads until ctx is done. It retries listing the topic's end offsets
// until it succeeds (the topic may not exist yet); fetch errors are logged
// and retried by the client.
func (t *Tail) Run(ctx context.Context) error {
	start, err := t.endOffsets(ctx)
	if err != nil {
		return err
	}
	// Control records are kept only to track the position (Barrier): a
	// transaction's marker is the last offset below the stable end.
	cl, err := NewClient(t.cfg.Kafka,
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{t.cfg.Topic: start}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.KeepControlRecords(),
	)
	if err != nil {
		return err
	}
	defer cl.Close()
	t.mu.Lock()
	for p, o := range start {
		t.pos[p] = o.EpochOffset().Offset
	}
	t.admin = kadm.NewClient(cl)
	t.mu.Unlock()
	close(t.ready)
	for {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil || fs.IsClientClosed() {
			return nil
		}
		fs.EachError(func(topic string, p int32, err error) {
			t.cfg.Logger.Warn("tail fetch error", zap.String("topic", topic), zap.Int32("partition", p), zap.Error(err))
		})
		recs := make([]Record, 0, fs.NumRecords())
		next := map[int32]int64{}
		fs.EachRecord(func(r *kgo.Record) {
			next[r.Partition] = r.Offset + 1
			if !r.Attrs.IsControl() {
				recs = append(recs, Record{Partition: r.Partition, Offset: r.Offset, Key: string(r.Key), Value: r.Value})
			}
		})
		if len(recs) > 0 {
			t.cfg.Deliver(recs)
		}
		t.advance(next) // after Deliver: past the position, everything was handed over
	}
}

// advance moves the partitions' positions to next and wakes Barrier's
// waiters.
func (t *Tail) advance(next map[int32]int64) {
	if len(next) == 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for p, o := range next {
		t.pos[p] = max(t.pos[p], o)
	}
	close(t.moved)
	t.moved = make(chan struct{})
}

// endOffsets returns each partition's last stable offset, retrying with
// backoff until the listing succeeds or ctx ends.
func (t *Tail) endOffsets(ctx context.Context) (map[int32]kgo.Offset, error) {
	backoff := 50 * time.Millisecond
	for {
		start, err := t.listEnds(ctx)
		if err == nil {
			return start, nil
		}
		t.cfg.Logger.Warn("tail: listing the topic's end offsets failed; retrying", zap.String("topic", t.cfg.Topic),
			zap.Duration("backoff", backoff), zap.Error(err))
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

func (t *Tail) listEnds(ctx context.Context) (map[int32]kgo.Offset, error) {
	cl, err := NewClient(t.cfg.Kafka)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	offs, err := kadm.NewClient(cl).ListCommittedOffsets(ctx, t.cfg.Topic)
	if err != nil {
		return nil, fmt.Errorf("list end offsets of %s: %w", t.cfg.Topic, err)
	}
	start := map[int32]kgo.Offset{}
	var errs []error
	offs.Each(func(o kadm.ListedOffset) {
		if o.Err != nil {
			errs = append(errs, fmt.Errorf("partition %d: %w", o.Partition, o.Err))
			return
		}
		start[o.Partition] = kgo.NewOffset().At(o.Offset)
	})
	if len(start) == 0 && len(errs) == 0 {
		errs = append(errs, fmt.Errorf("topic %s has no partitions", t.cfg.Topic))
	}
	return start, errors.Join(errs...)
}
