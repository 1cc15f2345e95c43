package runner

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/infra/kafka/wmkafka"
)

// HeaderReset marks a dead-letter record that says a projector was rebuilt
// from the beginning: dead letters before it no longer stop any run.
const HeaderReset = "xbot-reset"

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
	name := cfg.Projector.Name()
	group := Group(name)
	if err := kafka.EnsureTopics(ctx, cfg.Kafka); err != nil {
		return err
	}
	members, err := kafka.GroupMembers(ctx, cfg.Kafka, group)
	if err != nil {
		return err
	}
	if members > 0 {
		return fmt.Errorf("%w (group %s has %d members)", ErrProjectorRunning, group, members)
	}
	if fromBeginning {
		if err := reset(ctx, cfg); err != nil {
			return err
		}
	}
	topic := cfg.Kafka.EventsTopic()
	start, end, err := kafka.EndOffsets(ctx, cfg.Kafka, topic)
	if err != nil {
		return err
	}
	from, err := kafka.GroupCommitted(ctx, cfg.Kafka, group, topic)
	if err != nil {
		return err
	}
	if cp, err := cfg.Projector.Checkpoints(ctx); err != nil {
		return err
	} else if cp != nil {
		from = cp
	}
	var total int64
	for p, e := range end {
		total += max(0, e-max(start[p], from[p]))
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
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			if err == nil {
				err = ctx.Err()
			}
			return fmt.Errorf("rebuild of %s stopped: %w", name, err)
		case <-tick.C:
		}
		committed, err := kafka.GroupCommitted(ctx, cfg.Kafka, group, topic)
		if err != nil {
			return err
		}
		finished := true
		for p, e := range end {
			if e > start[p] && committed[p] < e {
				finished = false
			}
		}
		pr := Progress{Done: counted.n.Load(), Total: max(total, counted.n.Load()), Elapsed: time.Since(began), Finished: finished}
		if finished {
			pr.Total = pr.Done
		}
		if report != nil {
			report(pr)
		}
		if finished {
			cancel()
			return <-done
		}
	}
}

// reset empties the view, forgets the group's position and records in the
// dead-letter topic that earlier dead letters no longer stop any run.
func reset(ctx context.Context, cfg Config) error {
	if err := cfg.Projector.Reset(ctx); err != nil {
		return fmt.Errorf("reset %s: %w", cfg.Projector.Name(), err)
	}
	if err := kafka.DeleteGroup(ctx, cfg.Kafka, Group(cfg.Projector.Name())); err != nil {
		return err
	}
	pub, err := wmkafka.NewPublisher(wmkafka.PublisherConfig{Kafka: cfg.Kafka})
	if err != nil {
		return err
	}
	defer pub.Close()
	marker := message.NewMessage(fmt.Sprintf("reset-%s-%d", cfg.Projector.Name(), time.Now().UnixNano()), nil)
	marker.Metadata.Set(HeaderProjector, cfg.Projector.Name())
	marker.Metadata.Set(HeaderReset, "true")
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
