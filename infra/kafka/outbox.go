package kafka

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Outbox publishes records to one topic for readers outside the runtime
// (the IM view on xbot.im.outbox.v1). It is an idempotent producer with
// acks=all: records of one key land on one partition (the murmur2
// partitioner, as everywhere in xbot) in the order given, without gaps.
//
// Delivery is at least once. If Publish returns an error, any prefix of each
// partition's records may already be written; publishing the same records
// again then repeats that prefix, so readers must dedupe by an id inside the
// record. Records of one key are never reordered: when a record fails, every
// later record buffered for its partition fails with it.
type Outbox struct {
	cl    *kgo.Client
	topic string
}

// NewOutbox returns an outbox that publishes to topic.
func NewOutbox(c Config, topic string) (*Outbox, error) {
	if topic == "" {
		return nil, errors.New("outbox: topic is required")
	}
	cl, err := NewClient(c, kgo.DefaultProduceTopic(topic), kgo.ProducerLinger(0))
	if err != nil {
		return nil, err
	}
	return &Outbox{cl: cl, topic: topic}, nil
}

// Topic returns the topic the outbox publishes to.
func (o *Outbox) Topic() string { return o.topic }

// Publish writes recs in order and returns once all are acknowledged, or
// the first error. A record's Topic must be "" (the outbox's topic).
func (o *Outbox) Publish(ctx context.Context, recs []OutRecord) error {
	if len(recs) == 0 {
		return nil
	}
	krs := make([]*kgo.Record, len(recs))
	for i, r := range recs {
		if r.Topic != "" && r.Topic != o.topic {
			return fmt.Errorf("outbox %s: record %d is for topic %s", o.topic, i, r.Topic)
		}
		krs[i] = &kgo.Record{Topic: o.topic, Key: []byte(r.Key), Value: r.Value}
	}
	if err := o.cl.ProduceSync(ctx, krs...).FirstErr(); err != nil {
		return fmt.Errorf("publish %d records to %s: %w", len(recs), o.topic, err)
	}
	return nil
}

// Close waits for nothing (Publish is synchronous) and closes the client.
func (o *Outbox) Close() { o.cl.Close() }
