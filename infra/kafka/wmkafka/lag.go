package wmkafka

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// ErrNoConsumerGroup is returned by Lag for a subscriber without a group:
// it keeps no position outside its own memory.
var ErrNoConsumerGroup = errors.New("wmkafka: subscriber has no consumer group")

// TopicLag is how far the subscriber's consumer group is behind a topic.
type TopicLag struct {
	Topic string
	// Partitions maps each partition to its committed-read end offset (last
	// stable offset) minus the group's committed offset; a partition the
	// group never committed counts from the log start. These are offsets,
	// not messages: transaction markers and aborted records take offsets
	// too, so a group that has read everything committed shows 0 only once
	// it passed the trailing marker (the subscriber commits past markers).
	Partitions map[int32]int64
}

// Total is the lag summed over all partitions.
func (l TopicLag) Total() int64 {
	var n int64
	for _, v := range l.Partitions {
		n += v
	}
	return n
}

// Lag reports the consumer group's lag on topic, as committed in Kafka: it
// includes messages Acked but not yet committed (up to CommitInterval).
func (s *Subscriber) Lag(ctx context.Context, topic string) (TopicLag, error) {
	if s.cfg.ConsumerGroup == "" {
		return TopicLag{}, ErrNoConsumerGroup
	}
	adm := kadm.NewClient(s.admin)
	ends, err := listed(adm.ListCommittedOffsets(ctx, topic))
	if err != nil {
		return TopicLag{}, fmt.Errorf("lag of %s on %s: end offsets: %w", s.cfg.ConsumerGroup, topic, err)
	}
	starts, err := listed(adm.ListStartOffsets(ctx, topic))
	if err != nil {
		return TopicLag{}, fmt.Errorf("lag of %s on %s: start offsets: %w", s.cfg.ConsumerGroup, topic, err)
	}
	commits, err := adm.FetchOffsets(ctx, s.cfg.ConsumerGroup)
	if err == nil {
		err = commits.Error()
	}
	if errors.Is(err, kerr.GroupIDNotFound) { // kfake's answer for a group that never committed
		commits, err = nil, nil
	}
	if err != nil {
		return TopicLag{}, fmt.Errorf("lag of %s on %s: committed offsets: %w", s.cfg.ConsumerGroup, topic, err)
	}
	lag := TopicLag{Topic: topic, Partitions: map[int32]int64{}}
	for p, end := range ends[topic] {
		pos := starts[topic][p].Offset
		if c, ok := commits.Lookup(topic, p); ok && c.At >= 0 {
			pos = max(pos, c.At)
		}
		lag.Partitions[p] = max(0, end.Offset-pos)
	}
	return lag, nil
}

func listed(l kadm.ListedOffsets, err error) (kadm.ListedOffsets, error) {
	if err == nil {
		err = l.Error()
	}
	return l, err
}
