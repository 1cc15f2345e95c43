package wmkafka

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/xbot-runtime/xbot/infra/kafka"
)

// ErrSubscriberClosed is returned by Subscribe after Close.
var ErrSubscriberClosed = errors.New("wmkafka: subscriber closed")

// adminTimeout bounds topic creation and lag queries when the caller gives no
// deadline: a few request timeouts, so a dead cluster surfaces as an error.
const adminTimeout = 30 * time.Second

// Subscriber is a watermill message.Subscriber reading from Kafka. Every
// Subscribe call is an independent consumer (a group member when
// SubscriberConfig.ConsumerGroup is set). It is safe for concurrent use.
type Subscriber struct {
	cfg    SubscriberConfig
	admin  *kgo.Client // topic creation and lag; consumes nothing
	topics *topicCreator

	mu      sync.Mutex
	closed  bool
	nextID  int
	cancels map[int]context.CancelFunc
	running sync.WaitGroup
}

var (
	_ message.Subscriber           = (*Subscriber)(nil)
	_ message.SubscribeInitializer = (*Subscriber)(nil)
)

// NewSubscriber returns a subscriber; it connects lazily.
func NewSubscriber(cfg SubscriberConfig) (*Subscriber, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	admin, err := kafka.NewClient(cfg.Kafka, cfg.ClientOptions...)
	if err != nil {
		return nil, fmt.Errorf("wmkafka subscriber: %w", err)
	}
	return &Subscriber{
		cfg:     cfg,
		admin:   admin,
		topics:  newTopicCreator(admin, cfg.Kafka),
		cancels: map[int]context.CancelFunc{},
	}, nil
}

// Subscribe starts consuming topic (creating it first unless
// SkipTopicCreation) and returns the channel messages are delivered on. The
// channel is closed when ctx is cancelled or the Subscriber is closed, after
// the subscription committed its Acked offsets and left the group.
func (s *Subscriber) Subscribe(ctx context.Context, topic string) (<-chan *message.Message, error) {
	ctx, cancel := context.WithCancel(ctx)
	id, err := s.register(cancel)
	if err != nil {
		cancel()
		return nil, err
	}
	sub, err := s.start(ctx, topic)
	if err != nil {
		s.unregister(id)
		return nil, err
	}
	go func() {
		defer s.unregister(id)
		sub.run()
	}()
	return sub.out, nil
}

func (s *Subscriber) start(ctx context.Context, topic string) (*subscription, error) {
	if err := s.SubscribeInitialize(topic); err != nil {
		return nil, err
	}
	sub, err := newSubscription(ctx, s.cfg, topic)
	if err != nil {
		return nil, fmt.Errorf("subscribe to %s: %w", topic, err)
	}
	return sub, nil
}

// register records a running subscription so Close can stop it.
func (s *Subscriber) register(cancel context.CancelFunc) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, ErrSubscriberClosed
	}
	s.nextID++
	s.cancels[s.nextID] = cancel
	s.running.Add(1)
	return s.nextID, nil
}

func (s *Subscriber) unregister(id int) {
	s.mu.Lock()
	cancel := s.cancels[id]
	delete(s.cancels, id)
	s.mu.Unlock()
	cancel()
	s.running.Done()
}

// SubscribeInitialize creates topic with the configured partition count
// unless it exists or SkipTopicCreation is set. Subscribe calls it itself.
func (s *Subscriber) SubscribeInitialize(topic string) error {
	if s.cfg.SkipTopicCreation {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
	defer cancel()
	return s.topics.ensure(ctx, topic)
}

// Close stops every subscription and returns when all their channels are
// closed. Close is idempotent.
func (s *Subscriber) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	for _, cancel := range s.cancels {
		cancel()
	}
	s.mu.Unlock()
	s.running.Wait()
	s.admin.Close()
	s.cfg.Logger.Debug("subscriber closed", watermill.LogFields{"consumer_group": s.cfg.ConsumerGroup})
	return nil
}
