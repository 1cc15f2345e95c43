package kafka

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Config says where the cluster is and how xbot's topics are named.
type Config struct {
	// Brokers are the seed brokers. Required.
	Brokers []string
	// TopicPrefix is prepended to every topic name. Default "".
	TopicPrefix string
	// GroupPrefix is prepended to every consumer group and transactional id
	// xbot names (Group): the executors' group and transactional ids, each
	// projector's group. Default "". Two deployments on one cluster keep
	// apart with distinct TopicPrefix and GroupPrefix.
	GroupPrefix string
	// Partitions is the partition count used when xbot creates a topic. Default 12.
	Partitions int32
	// ReplicationFactor used when creating topics; -1 means the broker default.
	ReplicationFactor int16
	// Security is how clients authenticate and encrypt. Default: plaintext,
	// no authentication (dev only).
	Security Security
	// TransactionVersion is the transaction protocol the executors'
	// partition writers speak (WriterTuning): 1 (the default) adds each
	// partition to a transaction with AddPartitionsToTxn, which brokers
	// since 3.6 verify (KIP-890 part 1); 2 lets a cluster whose
	// transaction.version is 2 add partitions implicitly with the produce and
	// bump the epoch at every commit (KIP-890 part 2). On a three-broker
	// Apache Kafka 4.4 a lone commit took 17-33 ms at the median with 1 and
	// 48-52 ms with 2 (docs/kafka.md).
	TransactionVersion int16
	// InProcess says the brokers run inside this process: the embedded
	// kfake cluster of xbot dev, xbot bench and the tests. A broker's work
	// for a request is then this process's CPU, not a wait (the API's write
	// intake holds a command's slot until the broker acknowledges it).
	// Default false: brokers elsewhere.
	InProcess bool
}

func (c *Config) setDefaults() {
	if c.Partitions == 0 {
		c.Partitions = 12
	}
	if c.ReplicationFactor == 0 {
		c.ReplicationFactor = -1
	}
	if c.TransactionVersion == 0 {
		c.TransactionVersion = 1
	}
}

// Validate reports every problem with the configuration (zero values take
// their defaults first).
func (c Config) Validate() error {
	c.setDefaults()
	var errs []error
	if len(c.Brokers) == 0 {
		errs = append(errs, errors.New("kafka: at least one broker is required (kafka_brokers)"))
	}
	if c.Partitions < 1 {
		errs = append(errs, fmt.Errorf("kafka: partitions must be >= 1, got %d", c.Partitions))
	}
	if c.TransactionVersion != 1 && c.TransactionVersion != 2 {
		errs = append(errs, fmt.Errorf("kafka: transaction version must be 1 or 2 (kafka_transaction_version), got %d",
			c.TransactionVersion))
	}
	errs = append(errs, c.Security.validate()...)
	return errors.Join(errs...)
}

// WithDefaults returns c with defaults filled in.
func (c Config) WithDefaults() Config {
	c.setDefaults()
	return c
}

// Topic names without prefix.
const (
	commandsTopic   = "xbot.commands.v1"
	eventsTopic     = "xbot.events.v1"
	imOutboxTopic   = "xbot.im.outbox.v1"
	deadLetterTopic = "xbot.deadletter.v1"
	checkpointTopic = "xbot.checkpoints.v1"
)

// CommandsTopic is the topic commands are produced to, keyed by runId.
func (c Config) CommandsTopic() string { return c.TopicPrefix + commandsTopic }

// EventsTopic is the run event log, keyed by runId.
func (c Config) EventsTopic() string { return c.TopicPrefix + eventsTopic }

// IMOutboxTopic carries the IM view.
func (c Config) IMOutboxTopic() string { return c.TopicPrefix + imOutboxTopic }

// DeadLetterTopic receives records a projector could not apply.
func (c Config) DeadLetterTopic() string { return c.TopicPrefix + deadLetterTopic }

// CheckpointsTopic holds the executors' checkpoints of run state, partition p
// for the runs of partition p, written in the transactions of the events
// they summarise. It is compacted.
func (c Config) CheckpointsTopic() string { return c.TopicPrefix + checkpointTopic }

// Group returns the consumer group or transactional-id prefix xbot calls
// name, under GroupPrefix.
func (c Config) Group(name string) string { return c.GroupPrefix + name }

// NewClient returns a franz-go client for the configured brokers with the
// configured Security applied. Every Kafka client xbot makes comes from here.
func NewClient(c Config, opts ...kgo.Opt) (*kgo.Client, error) {
	c.setDefaults()
	if err := c.Validate(); err != nil {
		return nil, err
	}
	sec, err := c.Security.opts()
	if err != nil {
		return nil, err
	}
	all := append([]kgo.Opt{kgo.SeedBrokers(c.Brokers...)}, sec...)
	all = append(all, opts...)
	cl, err := kgo.NewClient(all...)
	if err != nil {
		return nil, fmt.Errorf("kafka client: %w", err)
	}
	return cl, nil
}
