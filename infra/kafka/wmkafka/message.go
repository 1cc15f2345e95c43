package wmkafka

import (
	"maps"
	"slices"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/twmb/franz-go/pkg/kgo"
)

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
