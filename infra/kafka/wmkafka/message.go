package wmkafka

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/twmb/franz-go/pkg/kgo"
)

// RecordMeta says where a delivered message came from.
type RecordMeta struct {
	Topic     string
	Partition int32
	Offset    int64
	Key       []byte
	Timestamp time.Time
	// Prev is the offset of the message delivered just before this one on
	// the same partition in the current delivery sequence, -1 for the first
	// message after an assignment or a redelivery from the committed
	// position. A pipelined handler (MaxInFlight > 1) processes a message
	// only after the one at Prev.
	Prev int64
}

type recordMetaKey struct{}

// RecordMetaFromContext returns the Kafka position of a message delivered by
// a Subscriber; pass msg.Context(). ok is false for any other context.
func RecordMetaFromContext(ctx context.Context) (RecordMeta, bool) {
	m, ok := ctx.Value(recordMetaKey{}).(RecordMeta)
	return m, ok
}

// toRecord maps a message to a record: metadata become headers, the UUID
// travels in UUIDHeader, the key is the keyMetadata field or else the UUID.
func toRecord(topic, keyMetadata string, msg *message.Message) *kgo.Record {
	key := msg.Metadata.Get(keyMetadata)
	if key == "" {
		key = msg.UUID
	}
	headers := make([]kgo.RecordHeader, 0, len(msg.Metadata)+1)
	headers = append(headers, kgo.RecordHeader{Key: UUIDHeader, Value: []byte(msg.UUID)})
	for _, k := range slices.Sorted(maps.Keys(msg.Metadata)) {
		headers = append(headers, kgo.RecordHeader{Key: k, Value: []byte(msg.Metadata[k])})
	}
	return &kgo.Record{Topic: topic, Key: []byte(key), Value: msg.Payload, Headers: headers}
}

// toMessage maps a record to a message whose context is a child of parent
// carrying the record's RecordMeta. A record without UUIDHeader (written by a
// plain Kafka producer) gets a UUID derived from its position, so every
// redelivery of it has the same UUID.
func toMessage(parent context.Context, r *kgo.Record, prev int64) (*message.Message, context.CancelFunc) {
	uuid := ""
	md := make(message.Metadata, len(r.Headers))
	for _, h := range r.Headers {
		if h.Key == UUIDHeader {
			uuid = string(h.Value)
			continue
		}
		md[h.Key] = string(h.Value)
	}
	if uuid == "" {
		uuid = fmt.Sprintf("%s/%d/%d", r.Topic, r.Partition, r.Offset)
	}
	msg := message.NewMessage(uuid, r.Value)
	msg.Metadata = md
	meta := RecordMeta{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Key: r.Key, Timestamp: r.Timestamp, Prev: prev}
	ctx, cancel := context.WithCancel(context.WithValue(parent, recordMetaKey{}, meta))
	msg.SetContext(ctx)
	return msg, cancel
}
