package kafka

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// EnsureTopics creates xbot's topics when they are missing, waits until
// every broker serves them, and checks that the commands and events topics
// have the same partition count: the executor relies on partition p of both
// holding the same runs.
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
	if err := awaitTopics(ctx, cl, topics); err != nil {
		return err
	}
	return checkPartitions(ctx, adm, c)
}

// topicPoll is the pause between probes while brokers learn new topics:
// Kafka's brokers apply the controller's metadata log within milliseconds.
const topicPoll = 20 * time.Millisecond

// awaitTopics returns once every broker lists each of topics with a leader
// for every partition. Kafka answers CreateTopics once the controller has
// created them; each broker learns them from the controller a moment later
// and until then answers UNKNOWN_TOPIC_OR_PARTITION (kfake knows a topic at
// once).
func awaitTopics(ctx context.Context, cl *kgo.Client, topics []string) error {
	for {
		err := topicsServed(ctx, cl, topics)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for the brokers to serve topics %v: %w (last: %w)", topics, ctx.Err(), err)
		case <-time.After(topicPoll):
		}
	}
}

// topicsServed asks every broker for topics' metadata.
func topicsServed(ctx context.Context, cl *kgo.Client, topics []string) error {
	brokers, err := kadm.NewClient(cl).BrokerMetadata(ctx)
	if err != nil {
		return fmt.Errorf("list brokers: %w", err)
	}
	req := kmsg.NewPtrMetadataRequest()
	for _, t := range topics {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(t)
		req.Topics = append(req.Topics, rt)
	}
	for _, b := range brokers.Brokers {
		resp, err := req.RequestWith(ctx, cl.Broker(int(b.NodeID)))
		if err != nil {
			return fmt.Errorf("metadata from broker %d: %w", b.NodeID, err)
		}
		for _, t := range resp.Topics {
			if err := topicServed(t); err != nil {
				return fmt.Errorf("broker %d: %w", b.NodeID, err)
			}
		}
	}
	return nil
}

func topicServed(t kmsg.MetadataResponseTopic) error {
	name := kmsg.StringPtr("")
	if t.Topic != nil {
		name = t.Topic
	}
	if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
		return fmt.Errorf("topic %s: %w", *name, err)
	}
	if len(t.Partitions) == 0 {
		return fmt.Errorf("topic %s: no partitions yet", *name)
	}
	for _, p := range t.Partitions {
		if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
			return fmt.Errorf("topic %s partition %d: %w", *name, p.Partition, err)
		}
		if p.Leader < 0 {
			return fmt.Errorf("topic %s partition %d: no leader yet", *name, p.Partition)
		}
	}
	return nil
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
