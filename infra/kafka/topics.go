package kafka

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// keepForever is the topic configuration of the topics whose records are
// the system's only copy: the events topic is the source of truth every view
// is rebuilt from, and a dead letter is the only trace of a record no view
// could apply. Kafka's broker default deletes records after 7 days.
var keepForever = map[string]*string{
	"retention.ms":    kadm.StringPtr("-1"),
	"retention.bytes": kadm.StringPtr("-1"),
	"cleanup.policy":  kadm.StringPtr("delete"),
}

// compacted is the configuration of the checkpoints topic: the latest
// record of each key is what a new owner of a partition needs, so Kafka
// keeps that one and deletes the ones it replaced, and no age deletes it.
var compacted = map[string]*string{
	"cleanup.policy": kadm.StringPtr("compact"),
	"retention.ms":   kadm.StringPtr("-1"),
}

// topicConfigs returns the configuration a topic xbot creates gets: the
// keep-forever settings for the log and the dead letters, and with a
// replication factor of 3 or more, min.insync.replicas 2 for the topics
// the executor writes transactionally, so that an acknowledged commit
// survives the loss of any one broker. Other settings are the broker's.
func (c Config) topicConfigs(topic string) map[string]*string {
	cfg := map[string]*string{}
	if topic == c.EventsTopic() || topic == c.DeadLetterTopic() {
		for k, v := range keepForever {
			cfg[k] = v
		}
	}
	if topic == c.CheckpointsTopic() {
		for k, v := range compacted {
			cfg[k] = v
		}
	}
	if c.ReplicationFactor >= 3 && topic != c.DeadLetterTopic() {
		cfg["min.insync.replicas"] = kadm.StringPtr("2")
	}
	return cfg
}

// EnsureTopics creates xbot's topics when they are missing and checks that the
// commands and events topics have the same partition count: the executor
// relies on partition p of both holding the same runs. It returns once every
// broker serves them. Topics that exist are left as they are; CheckTopics says what in their settings puts the log at
// risk.
func EnsureTopics(ctx context.Context, c Config) error {
	c.setDefaults()
	cl, err := NewClient(c)
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	topics := []string{c.CommandsTopic(), c.EventsTopic(), c.IMOutboxTopic(), c.DeadLetterTopic(), c.CheckpointsTopic()}
	for _, topic := range topics {
		n := c.Partitions
		if topic == c.CheckpointsTopic() {
			// Added beside a commands topic that may have been created
			// with another count (an upgrade): it must match that one.
			if err := awaitTopics(ctx, cl, []string{c.CommandsTopic()}); err != nil {
				return err
			}
			count, err := PartitionCount(ctx, cl, c.CommandsTopic())
			if err != nil {
				return err
			}
			n = int32(count)
		}
		res, err := adm.CreateTopic(ctx, n, c.ReplicationFactor, c.topicConfigs(topic), topic)
		if err == nil {
			err = res.Err
		}
		if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
			return fmt.Errorf("create topic %s: %w", topic, err)
		}
	}
	if err := awaitTopics(ctx, cl, topics); err != nil {
		return err
	}
	return checkPartitions(ctx, adm, c)
}

// CheckTopics reads the settings of the existing commands, events and dead-
// letter topics and returns one line per setting that puts the log at risk:
// a finite retention or compaction of the events or dead-letter topic (the
// log is the only copy; views are rebuilt from offset 0), a replication
// factor of 1, or min.insync.replicas below 2 with three or more replicas
// (an acknowledged commit could be lost with one broker). It is advice for
// operators: xbot runs regardless.
func CheckTopics(ctx context.Context, c Config) ([]string, error) {
	c.setDefaults()
	cl, err := NewClient(c)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	topics := []string{c.CommandsTopic(), c.EventsTopic(), c.DeadLetterTopic(), c.CheckpointsTopic()}
	details, err := adm.ListTopics(ctx, topics...)
	if err != nil {
		return nil, fmt.Errorf("describe topics: %w", err)
	}
	configs, err := adm.DescribeTopicConfigs(ctx, topics...)
	if err != nil {
		return nil, fmt.Errorf("describe topic configs: %w", err)
	}
	var warnings []string
	for _, rc := range configs {
		if rc.Err != nil {
			return nil, fmt.Errorf("describe config of %s: %w", rc.Name, rc.Err)
		}
		d := details[rc.Name]
		if d.Err != nil {
			return nil, fmt.Errorf("describe topic %s: %w", rc.Name, d.Err)
		}
		if rc.Name == c.CheckpointsTopic() {
			warnings = append(warnings, checkpointWarnings(rc.Name, replicas(d), values(rc))...)
			continue
		}
		warnings = append(warnings, topicWarnings(rc.Name, rc.Name != c.CommandsTopic(), replicas(d), values(rc))...)
	}
	return warnings, nil
}

// topicWarnings judges one topic's settings; keep says whether it must keep
// every record.
func topicWarnings(topic string, keep bool, rf int, cfg map[string]string) []string {
	var w []string
	if keep {
		for _, k := range []string{"retention.ms", "retention.bytes"} {
			if v, ok := cfg[k]; ok && v != "-1" {
				w = append(w, fmt.Sprintf("%s: %s=%s deletes records the system needs (want -1: views are rebuilt from offset 0)", topic, k, v))
			}
		}
		if p := cfg["cleanup.policy"]; p != "" && p != "delete" {
			w = append(w, fmt.Sprintf("%s: cleanup.policy=%s drops records of the log (want delete with infinite retention)", topic, p))
		}
	}
	switch isr, _ := strconv.Atoi(cfg["min.insync.replicas"]); {
	case rf == 1:
		w = append(w, fmt.Sprintf("%s: replication factor 1: losing its broker loses the log (want 3)", topic))
	case rf >= 3 && isr < 2:
		w = append(w, fmt.Sprintf("%s: min.insync.replicas=%s with %d replicas: a commit acknowledged by one broker can be lost (want 2)", topic, cfg["min.insync.replicas"], rf))
	}
	return w
}

// checkpointWarnings judges the checkpoints topic: it must be compacted
// without an age limit, or a new owner could miss the checkpoint of a run
// that has not changed for a while.
func checkpointWarnings(topic string, rf int, cfg map[string]string) []string {
	var w []string
	if p := cfg["cleanup.policy"]; p != "compact" {
		w = append(w, fmt.Sprintf("%s: cleanup.policy=%s (want compact: each run's latest checkpoint must stay)", topic, p))
	}
	if v, ok := cfg["retention.ms"]; ok && v != "-1" && cfg["cleanup.policy"] != "compact" {
		w = append(w, fmt.Sprintf("%s: retention.ms=%s deletes checkpoints a new owner needs (want -1)", topic, v))
	}
	return append(w, topicWarnings(topic, false, rf, cfg)...)
}

func replicas(d kadm.TopicDetail) int {
	rf := 0
	for _, p := range d.Partitions {
		rf = max(rf, len(p.Replicas))
	}
	return rf
}

func values(rc kadm.ResourceConfig) map[string]string {
	m := make(map[string]string, len(rc.Configs))
	for _, c := range rc.Configs {
		if c.Value != nil {
			m[c.Key] = *c.Value
		}
	}
	return m
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
	details, err := adm.ListTopics(ctx, c.CommandsTopic(), c.EventsTopic(), c.CheckpointsTopic())
	if err != nil {
		return fmt.Errorf("describe topics: %w", err)
	}
	cmd := details[c.CommandsTopic()]
	for _, t := range []string{c.CommandsTopic(), c.EventsTopic(), c.CheckpointsTopic()} {
		if err := details[t].Err; err != nil {
			return fmt.Errorf("describe topic %s: %w", t, err)
		}
	}
	for _, t := range []string{c.EventsTopic(), c.CheckpointsTopic()} {
		if n := len(details[t].Partitions); n != len(cmd.Partitions) {
			return fmt.Errorf("topics %s (%d partitions) and %s (%d partitions) must have the same partition count",
				c.CommandsTopic(), len(cmd.Partitions), t, n)
		}
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
