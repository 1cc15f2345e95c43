package wmkafka

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/xbot-runtime/xbot/infra/kafka"
)

// ErrPublisherClosed is returned by Publish after Close.
var ErrPublisherClosed = errors.New("wmkafka: publisher closed")

// Publisher is a watermill message.Publisher writing to Kafka. It is safe for
// concurrent use.
type Publisher struct {
	cfg    PublisherConfig
	cl     *kgo.Client
	topics *topicCreator
	log    watermill.LoggerAdapter

	// mu is held for reading by every Publish in flight and for writing by
	// Close, so Close waits for them and no Publish starts after it.
	mu     sync.RWMutex
	closed bool
}

var _ message.Publisher = (*Publisher)(nil)

// NewPublisher returns a publisher with an idempotent producer (acks=all).
func NewPublisher(cfg PublisherConfig) (*Publisher, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cl, err := kafka.NewClient(cfg.Kafka, cfg.ClientOptions...)
	if err != nil {
		return nil, fmt.Errorf("wmkafka publisher: %w", err)
	}
	return &Publisher{cfg: cfg, cl: cl, topics: newTopicCreator(cl, cfg.Kafka), log: cfg.Logger}, nil
}

// Publish writes msgs to topic and returns once all are acknowledged. On
// error some of msgs may have been written (the error names how many
// failed); publishing them again can duplicate the others.
func (p *Publisher) Publish(topic string, msgs ...*message.Message) error {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.closed {
		return ErrPublisherClosed
	}
	ctx, cancel := context.WithTimeout(context.Background(), p.cfg.PublishTimeout)
	defer cancel()
	if !p.cfg.SkipTopicCreation {
		if err := p.topics.ensure(ctx, topic); err != nil {
			return fmt.Errorf("publish to %s: %w", topic, err)
		}
	}
	recs := make([]*kgo.Record, len(msgs))
	uuids := make(map[*kgo.Record]string, len(msgs))
	for i, msg := range msgs {
		recs[i] = toRecord(topic, p.cfg.KeyMetadata, msg)
		uuids[recs[i]] = msg.UUID
	}
	return p.check(topic, uuids, p.cl.ProduceSync(ctx, recs...))
}

// check turns produce results (which come in completion order) into one
// error naming the failed messages.
func (p *Publisher) check(topic string, uuids map[*kgo.Record]string, res kgo.ProduceResults) error {
	var errs []error
	for _, r := range res {
		if r.Err != nil {
			errs = append(errs, fmt.Errorf("message %s: %w", uuids[r.Record], r.Err))
		}
	}
	if len(errs) == 0 {
		p.log.Trace("published", watermill.LogFields{"topic": topic, "messages": len(res)})
		return nil
	}
	err := fmt.Errorf("publish to %s: %d of %d messages failed: %w", topic, len(errs), len(res), errors.Join(errs...))
	p.log.Error("publish failed", err, watermill.LogFields{"topic": topic})
	return err
}

// Close waits for Publish calls in flight (each bounded by PublishTimeout),
// then closes the client. Further Publish calls return ErrPublisherClosed.
// Close is idempotent.
func (p *Publisher) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	p.closed = true
	p.cl.Close()
	return nil
}
