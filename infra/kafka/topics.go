package kafka

import (
	"context"
	"errors"
	"fmt"

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

func checkPartitions(ctx context.Context, adm *kadm.Client, c Config) error {
	details, err := adm.ListTopics(ctx, c.CommandsTopic(), c.EventsTopic())
	if err != nil {
		return fmt.Errorf("describe topics: %w", err)
	}
	cmd, ev := details[c.CommandsTopic()], details[c.EventsTopic()]
	if cmd.Err != nil || ev.Err != nil {
		return fmt.Errorf("describe topics: %w", errors.Join(cmd.Err, ev.Err))
	}
	if len(cmd.Partitions) != len(ev.Partitions) {
		return fmt.Errorf("topics %s (%d partitions) and %s (%d partitions) must have the same partition count",
			c.CommandsTopic(), len(cmd.Partitions), c.EventsTopic(), len(ev.Partitions))
	}
	return nil
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
