package kafka

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// EnsureTopics creates xbot's topics when they are missing and checks that the
// commands and events topics have the same partition count: the executor
// relies on partition p of both holding the same runs.
func EnsureTopics(ctx context.Context, c Config) error {
	c.setDefaults()
	cl, err := NewClient(c)
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	topics := []string{c.CommandsTopic(), c.EventsTopic(), c.IMOutboxTopic(), c.DeadLetterTopic()}
	res, err := adm.CreateTopics(ctx, c.Partitions, c.ReplicationFactor, nil, topics...)
	if err != nil {
		return fmt.Errorf("create topics: %w", err)
	}
	for _, r := range res.Sorted() {
		if r.Err != nil && !errors.Is(r.Err, kerr.TopicAlreadyExists) {
			return fmt.Errorf("create topic %s: %w", r.Topic, r.Err)
		}
	}
	return checkPartitions(ctx, adm, c)
}

// topicPoll is the pause between metadata reads while a created topic is not
// known everywhere yet: the controller spreads it within milliseconds.
const topicPoll = 100 * time.Millisecond

func checkPartitions(ctx context.Context, adm *kadm.Client, c Config) error {
	cmd, ev, err := describeCreated(ctx, adm, c.CommandsTopic(), c.EventsTopic())
	if err != nil {
		return err
	}
	if len(cmd.Partitions) != len(ev.Partitions) {
		return fmt.Errorf("topics %s (%d partitions) and %s (%d partitions) must have the same partition count",
			c.CommandsTopic(), len(cmd.Partitions), c.EventsTopic(), len(ev.Partitions))
	}
	return nil
}

// describeCreated describes two topics just created or found. A broker
// learns of a topic the controller created asynchronously (Apache Kafka
// answers CreateTopics before every broker has the metadata), so a topic
// the broker asked does not know yet is asked for again until ctx ends.
func describeCreated(ctx context.Context, adm *kadm.Client, a, b string) (da, db kadm.TopicDetail, err error) {
	for {
		details, err := adm.ListTopics(ctx, a, b)
		if err != nil {
			return da, db, fmt.Errorf("describe topics: %w", err)
		}
		da, db = details[a], details[b]
		err = errors.Join(da.Err, db.Err)
		if err == nil {
			return da, db, nil
		}
		if !errors.Is(err, kerr.UnknownTopicOrPartition) {
			return da, db, fmt.Errorf("describe topics: %w", err)
		}
		select {
		case <-ctx.Done():
			return da, db, fmt.Errorf("describe topics: %w (%w)", err, ctx.Err())
		case <-time.After(topicPoll):
		}
	}
}

// PartitionCount returns the number of partitions of a topic.
func PartitionCount(ctx context.Context, cl *kgo.Client, topic string) (int, error) {
	details, err := kadm.NewClient(cl).ListTopics(ctx, topic)
	if err != nil {
		return 0, fmt.Errorf("describe topic %s: %w", topic, err)
	}
	d := details[topic]
	if d.Err != nil {
		return 0, fmt.Errorf("describe topic %s: %w", topic, d.Err)
	}
	return len(d.Partitions), nil
}
