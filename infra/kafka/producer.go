package kafka

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Producer produces single records durably (acks=all, idempotent) and waits
// for the broker's acknowledgement. The API uses it to enqueue commands.
type Producer struct {
	cl *kgo.Client
}

// producerBufferBytes bounds what a Producer keeps of records not yet
// acknowledged. A caller that stops waiting (the API answers a write 503
// after its timeout) leaves its record in the buffer while the brokers are
// away; the bound keeps an outage's records from growing without limit
// (franz-go's default buffer is 50,000 records of any size). A produce
// beyond it waits for room until its context ends.
const producerBufferBytes = 64 << 20

// NewProducer returns a producer for the configured cluster.
func NewProducer(c Config) (*Producer, error) {
	cl, err := NewClient(c, kgo.ProducerLinger(0), kgo.MaxBufferedBytes(producerBufferBytes))
	if err != nil {
		return nil, err
	}
	return &Producer{cl: cl}, nil
}

// Produce writes value to topic with key and returns once it is acknowledged.
// Records with the same key land on the same partition (franz-go's default
// murmur2 partitioner, the one the executor's partitions are defined by).
func (p *Producer) Produce(ctx context.Context, topic, key string, value []byte) error {
	return p.ProduceQueued(ctx, topic, key, value, nil, func() {})
}

// ProduceWithHeaders is Produce with record headers (a command's signature).
func (p *Producer) ProduceWithHeaders(ctx context.Context, topic, key string, value []byte, headers map[string]string) error {
	return p.ProduceQueued(ctx, topic, key, value, headers, func() {})
}

// ProduceQueued is ProduceWithHeaders that calls queued once the record is
// in the client's buffer, before its acknowledgement is waited for: from
// then on the record needs nothing more of the caller, only the brokers'
// answer. queued is called once, also when the record fails before it is
// buffered (ctx ended while the buffer was full).
func (p *Producer) ProduceQueued(ctx context.Context, topic, key string, value []byte, headers map[string]string,
	queued func()) error {
	rec := &kgo.Record{Topic: topic, Key: []byte(key), Value: value, Headers: recordHeaders(headers)}
	acked := make(chan error, 1)
	p.cl.Produce(ctx, rec, func(_ *kgo.Record, err error) { acked <- err })
	queued()
	if err := <-acked; err != nil {
		return fmt.Errorf("produce to %s key %s: %w", topic, key, err)
	}
	return nil
}

// Ping checks that a broker answers.
func (p *Producer) Ping(ctx context.Context) error { return p.cl.Ping(ctx) }

// PartitionCount returns the number of partitions of topic.
func (p *Producer) PartitionCount(ctx context.Context, topic string) (int, error) {
	return PartitionCount(ctx, p.cl, topic)
}

// Close flushes nothing (every Produce is synchronous) and closes the client.
func (p *Producer) Close() { p.cl.Close() }
