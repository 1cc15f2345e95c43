package wmkafka

import (
	"errors"
	"fmt"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/xbot-runtime/xbot/infra/kafka"
)

// DefaultKeyMetadata is the metadata field whose value becomes the Kafka record key.
const DefaultKeyMetadata = "partition_key"

// UUIDHeader is the record header carrying the watermill message UUID (the
// name watermill-kafka uses, so both adapters read each other's records).
const UUIDHeader = "_watermill_message_uuid"

// PublisherConfig configures a Publisher.
type PublisherConfig struct {
	// Kafka is the cluster. Required: Brokers. Partitions and
	// ReplicationFactor are used when a missing topic is created. TopicPrefix
	// is not applied: topics are used exactly as passed to Publish (pass
	// Kafka.EventsTopic() and friends).
	Kafka kafka.Config
	// KeyMetadata names the metadata field whose value is the record key.
	// Messages without it are keyed by their UUID. Default DefaultKeyMetadata.
	KeyMetadata string
	// PublishTimeout bounds one Publish call. Default 30 s: long enough to ride
	// out a leader election, short enough that a dead cluster surfaces as an
	// error instead of a hang.
	PublishTimeout time.Duration
	// SkipTopicCreation stops the publisher from creating a missing topic
	// before its first publish (for clusters where clients may not create
	// topics). Default false.
	SkipTopicCreation bool
	// Logger receives the publisher's logs. Default watermill.NopLogger.
	Logger watermill.LoggerAdapter
	// ClientOptions are appended to the franz-go client options (tuning,
	// TLS, SASL). Optional.
	ClientOptions []kgo.Opt
}

func (c *PublisherConfig) setDefaults() {
	c.Kafka = c.Kafka.WithDefaults()
	if c.KeyMetadata == "" {
		c.KeyMetadata = DefaultKeyMetadata
	}
	if c.PublishTimeout == 0 {
		c.PublishTimeout = 30 * time.Second
	}
	if c.Logger == nil {
		c.Logger = watermill.NopLogger{}
	}
}

// Validate reports every problem with the configuration (zero values take
// their defaults first).
func (c PublisherConfig) Validate() error {
	c.setDefaults()
	var errs []error
	if err := c.Kafka.Validate(); err != nil {
		errs = append(errs, err)
	}
	if c.PublishTimeout < 0 {
		errs = append(errs, fmt.Errorf("wmkafka publisher: PublishTimeout must be positive, got %s", c.PublishTimeout))
	}
	return errors.Join(errs...)
}

// SubscriberConfig configures a Subscriber.
type SubscriberConfig struct {
	// Kafka is the cluster. Required: Brokers. Partitions and
	// ReplicationFactor are used when a missing topic is created; TopicPrefix
	// is not applied.
	Kafka kafka.Config
	// ConsumerGroup every Subscribe joins. Each Subscribe call is one group
	// member with its own connection. Empty means no group: each Subscribe
	// reads all partitions from the beginning and commits nothing.
	ConsumerGroup string
	// NackResendDelay is how long a Nacked message waits before it is
	// delivered again; its partition makes no progress meanwhile. Default
	// 100 ms: a failing handler does not spin, a transient error costs little.
	// A negative value redelivers at once.
	NackResendDelay time.Duration
	// CommitInterval is how often Acked offsets are committed. Offsets are
	// also committed when partitions are revoked and on close. Default 1 s.
	CommitInterval time.Duration
	// MaxInFlight is how many messages of one partition may be delivered and
	// not yet Acked at once. Default 1: the next message waits for the
	// previous Ack. Above 1 (pipelining, for handlers that batch), messages
	// are still sent in offset order and offsets are committed only up to
	// the first unacked one; a Nack redelivers that message and every later
	// one in flight (their Acks are ignored), in order. RecordMeta.Prev lets a
	// handler restore the order its goroutines may have lost.
	MaxInFlight int
	// CloseTimeout bounds the final offset commit when a subscription ends.
	// Default 10 s.
	CloseTimeout time.Duration
	// SkipTopicCreation stops Subscribe and SubscribeInitialize from creating
	// a missing topic. Default false.
	SkipTopicCreation bool
	// Logger receives the subscriber's logs. Default watermill.NopLogger.
	Logger watermill.LoggerAdapter
	// ClientOptions are appended to the franz-go consumer options (tuning,
	// TLS, SASL, kgo.HeartbeatInterval...). Options that change how records
	// are consumed or committed break the guarantees above. Optional.
	ClientOptions []kgo.Opt
}

func (c *SubscriberConfig) setDefaults() {
	c.Kafka = c.Kafka.WithDefaults()
	if c.NackResendDelay == 0 {
		c.NackResendDelay = 100 * time.Millisecond
	}
	if c.NackResendDelay < 0 {
		c.NackResendDelay = 0
	}
	if c.CommitInterval == 0 {
		c.CommitInterval = time.Second
	}
	if c.MaxInFlight <= 0 {
		c.MaxInFlight = 1
	}
	if c.CloseTimeout == 0 {
		c.CloseTimeout = 10 * time.Second
	}
	if c.Logger == nil {
		c.Logger = watermill.NopLogger{}
	}
}

// Validate reports every problem with the configuration (zero values take
// their defaults first).
func (c SubscriberConfig) Validate() error {
	c.setDefaults()
	var errs []error
	if err := c.Kafka.Validate(); err != nil {
		errs = append(errs, err)
	}
	if c.CommitInterval < 0 {
		errs = append(errs, fmt.Errorf("wmkafka subscriber: CommitInterval must be positive, got %s", c.CommitInterval))
	}
	if c.CloseTimeout < 0 {
		errs = append(errs, fmt.Errorf("wmkafka subscriber: CloseTimeout must be positive, got %s", c.CloseTimeout))
	}
	return errors.Join(errs...)
}
