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
