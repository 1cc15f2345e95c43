package im

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/projections/runner"
)

// Publisher sends records to the IM outbox in order, returning once all are
// durable. *kafka.Outbox on the topic Config.IMOutboxTopic() is the real one.
type Publisher interface {
	Publish(ctx context.Context, recs []kafka.OutRecord) error
}

// Config configures the IM projector.
type Config struct {
	// Logger is required.
	Logger *zap.Logger
}

// Validate reports every configuration problem.
func (c Config) Validate() error {
	if c.Logger == nil {
		return errors.New("im projector: Logger is required")
	}
	return nil
}

// Projector is the runner.Projector of the IM view: it flattens each batch
// and publishes the messages, keyed by conversation id, before Apply returns.
//
// It keeps no position of its own (Checkpoints is nil): the runner commits
// the consumer group's offsets after Apply, so a crash in between republishes
// the batch with the same message ids, which IM workers dedupe. A Kafka
// transaction spanning the publish and the offset commit could make the
// outbox exactly once, but the hop from IM worker to chat platform is at
// least once anyway, so workers dedupe regardless and the transaction would
// buy nothing end to end.
type Projector struct {
	pub Publisher
	log *zap.Logger
}

var _ runner.Projector = (*Projector)(nil)

// NewProjector returns the IM projector. A nil publisher is a wiring mistake and panics.
func NewProjector(cfg Config, pub Publisher) (*Projector, error) {
	if pub == nil {
		panic("im: NewProjector needs a Publisher")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Projector{pub: pub, log: cfg.Logger}, nil
}

// Name is events.ViewIM.
func (p *Projector) Name() string { return events.ViewIM }

// Checkpoints returns nil: positions are the consumer group's offsets.
func (p *Projector) Checkpoints(context.Context) (map[int32]int64, error) { return nil, nil }

// Reset does nothing: records on Kafka cannot be taken back. A rebuild
// replays the log and republishes every message with the same id; IM workers
// drop the ones they already delivered.
func (p *Projector) Reset(context.Context) error { return nil }

// Apply publishes the messages of batch in record order. A record whose
// payload does not decode is poison: Apply still publishes the messages of
// the other runs in the batch, skips the poisoned run from that record on,
// and returns the first *runner.PoisonError. Publishing is idempotent by
// message id, so the runner may deliver the batch again.
func (p *Projector) Apply(ctx context.Context, batch []runner.Record) error {
	recs, poison := p.flattenBatch(batch)
	if err := p.pub.Publish(ctx, recs); err != nil {
		return fmt.Errorf("im projector: %w", err)
	}
	if poison != nil {
		return poison
	}
	return nil
}

func (p *Projector) flattenBatch(batch []runner.Record) ([]kafka.OutRecord, *runner.PoisonError) {
	var (
		recs     []kafka.OutRecord
		first    *runner.PoisonError
		poisoned = map[string]bool{}
	)
	for _, rec := range batch {
		if poisoned[rec.Event.RunID] {
			continue
		}
		out, ok, err := encode(rec.Event)
		if err != nil {
			poisoned[rec.Event.RunID] = true
			pe := runner.Poison(rec, err.Error())
			p.log.Warn("poison record", zap.String("run_id", pe.RunID), zap.Int64("seq", pe.Seq),
				zap.Int32("partition", pe.Partition), zap.Int64("offset", pe.Offset), zap.Error(err))
			if first == nil {
				first = pe
			}
			continue
		}
		if ok {
			recs = append(recs, out)
		}
	}
	return recs, first
}

// encode flattens one event into the outbox record of its message, if any.
func encode(e events.Envelope) (kafka.OutRecord, bool, error) {
	m, ok, err := Flatten(e)
	if err != nil || !ok {
		return kafka.OutRecord{}, false, err
	}
	value, err := json.Marshal(m)
	if err != nil {
		return kafka.OutRecord{}, false, fmt.Errorf("encode message of run %s seq %d: %w", e.RunID, e.Seq, err)
	}
	return kafka.OutRecord{Key: m.ConversationID, Value: value}, true, nil
}
