package runner

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/infra/kafka/wmkafka"
)

// HeaderReset marks a dead-letter record that says a projector was rebuilt
// from the beginning: dead letters of earlier generations no longer stop any
// run. HeaderGeneration carries the generation: the reset's time in a
// marker, the latest reset the writing runner knew of in a dead letter. Dead
// letters are keyed by run, so they spread over partitions and their order
// relative to a marker is lost; generations do not depend on it.
const (
	HeaderReset      = "xbot-reset"
	HeaderGeneration = "xbot-generation"
)

// Progress is how far a rebuild is.
type Progress struct {
	// Done counts records applied; Total estimates the records to apply
	// (offsets, so transaction markers count too; Done reaches Total when
	// the rebuild ends).
	Done, Total int64
	Elapsed     time.Duration
	Finished    bool
}

// Rate is records per second so far.
func (p Progress) Rate() float64 {
	if p.Elapsed <= 0 {
		return 0
	}
	return float64(p.Done) / p.Elapsed.Seconds()
}

// ETA estimates the time left.
func (p Progress) ETA() time.Duration {
	r := p.Rate()
	if r == 0 || p.Done >= p.Total {
		return 0
	}
	return time.Duration(float64(p.Total-p.Done) / r * float64(time.Second))
}

// ErrProjectorRunning is returned when the view's projector is running: a
// rebuild must not race the live projector.
var ErrProjectorRunning = errors.New("the projector is running; stop it before a rebuild")

// Rebuild brings the view up to the end the events topic has when it starts,
// then returns. With fromBeginning it first empties the view (Reset),
// forgets the group's offsets and the runs it had stopped, so the view is
// rebuilt from offset zero. report is called a few times a second.
func Rebuild(ctx context.Context, cfg Config, fromBeginning bool, report func(Progress)) error {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return err
	}
	if err := prepareRebuild(ctx, cfg, fromBeginning); err != nil {
		return err
	}
	topic, group := cfg.Kafka.EventsTopic(), Group(cfg.Kafka, cfg.Projector.Name())
	start, end, err := kafka.EndOffsets(ctx, cfg.Kafka, topic)
	if err != nil {
		return err
	}
	total, err := remaining(ctx, cfg, start, end)
	if err != nil {
		return err
	}
	counted := &counting{Projector: cfg.Projector}
	cfg.Projector = counted
	r, err := New(ctx, cfg)
	if err != nil {
		return err
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- r.Run(rctx) }()
	began := time.Now()
	// The end is checked every 50 ms (one offset fetch from the group's
	// coordinator), so a rebuild stops soon after its last commit; progress
	// is reported every 250 ms.
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var reported time.Time
	for {
		select {
		case err := <-done:
			if err == nil {
				err = ctx.Err()
			}
			return fmt.Errorf("rebuild of %s stopped: %w", counted.Name(), err)
		case <-tick.C:
		}
		committed, err := kafka.GroupCommitted(ctx, cfg.Kafka, group, topic)
		if err != nil {
			return err
		}
		finished := reached(committed, start, end)
		n := counted.n.Load()
		pr := Progress{Done: n, Total: max(total, n), Elapsed: time.Since(began), Finished: finished}
		if finished {
			pr.Total = n
		}
		if report != nil && (finished || time.Since(reported) >= 250*time.Millisecond) {
			report(pr)
			reported = time.Now()
		}
		if finished {
			cancel()
			return <-done
		}
	}
}

// prepareRebuild refuses to race a live projector and, from the beginning,
// resets the view.
func prepareRebuild(ctx context.Context, cfg Config, fromBeginning bool) error {
	if err := kafka.EnsureTopics(ctx, cfg.Kafka); err != nil {
		return err
	}
	group := Group(cfg.Kafka, cfg.Projector.Name())
	members, err := kafka.GroupMembers(ctx, cfg.Kafka, group)
	if err != nil {
		return err
	}
	if members > 0 {
		return fmt.Errorf("%w (group %s has %d members)", ErrProjectorRunning, group, members)
	}
	if fromBeginning {
		return reset(ctx, cfg)
	}
	return nil
}

// remaining estimates the records between the view's position and end.
func remaining(ctx context.Context, cfg Config, start, end map[int32]int64) (int64, error) {
	from, err := kafka.GroupCommitted(ctx, cfg.Kafka, Group(cfg.Kafka, cfg.Projector.Name()), cfg.Kafka.EventsTopic())
	if err != nil {
		return 0, err
	}
	cp, err := cfg.Projector.Checkpoints(ctx)
	if err != nil {
		return 0, err
	}
	if cp != nil {
		from = cp
	}
	var total int64
	for p, e := range end {
		total += max(0, e-max(start[p], from[p]))
	}
	return total, nil
}

// reached says the group's committed offsets passed end on every partition
// that has records.
func reached(committed, start, end map[int32]int64) bool {
	for p, e := range end {
		if e > start[p] && committed[p] < e {
			return false
		}
	}
	return true
}

// reset empties the view, forgets the group's position and records in the
// dead-letter topic that earlier dead letters no longer stop any run.
func reset(ctx context.Context, cfg Config) error {
	if err := cfg.Projector.Reset(ctx); err != nil {
		return fmt.Errorf("reset %s: %w", cfg.Projector.Name(), err)
	}
	if err := kafka.DeleteGroup(ctx, cfg.Kafka, Group(cfg.Kafka, cfg.Projector.Name())); err != nil {
		return err
	}
	pub, err := wmkafka.NewPublisher(wmkafka.PublisherConfig{Kafka: cfg.Kafka})
	if err != nil {
		return err
	}
	defer func() { _ = pub.Close() }()
	gen := time.Now().UnixNano()
	marker := message.NewMessage(fmt.Sprintf("reset-%s-%d", cfg.Projector.Name(), gen), nil)
	marker.Metadata.Set(HeaderProjector, cfg.Projector.Name())
	marker.Metadata.Set(HeaderReset, "true")
	marker.Metadata.Set(HeaderGeneration, strconv.FormatInt(gen, 10))
	marker.Metadata.Set(HeaderReason, "the view was rebuilt from the beginning")
	return pub.Publish(cfg.Kafka.DeadLetterTopic(), marker)
}

// counting counts the records a projector applied.
type counting struct {
	Projector
	n atomic.Int64
}

func (c *counting) Apply(ctx context.Context, batch []Record) error {
	if err := c.Projector.Apply(ctx, batch); err != nil {
		return err
	}
	c.n.Add(int64(len(batch)))
	return nil
}
