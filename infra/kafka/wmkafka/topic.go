package wmkafka

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/xbot-runtime/xbot/infra/kafka"
)

// topicCreator creates missing topics once per topic and remembers which
// exist, so only the first publish to a topic pays a request.
type topicCreator struct {
	adm   *kadm.Client
	kafka kafka.Config
	known sync.Map // topic -> struct{}
}

func newTopicCreator(cl *kgo.Client, kc kafka.Config) *topicCreator {
	return &topicCreator{adm: kadm.NewClient(cl), kafka: kc}
}

// ensure creates topic with the configured partition count unless it exists.
// An existing topic is left as it is, whatever its partition count.
func (tc *topicCreator) ensure(ctx context.Context, topic string) error {
	if _, ok := tc.known.Load(topic); ok {
		return nil
	}
	res, err := tc.adm.CreateTopic(ctx, tc.kafka.Partitions, tc.kafka.ReplicationFactor, nil, topic)
	if err == nil {
		err = res.Err
	}
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return fmt.Errorf("create topic %s: %w", topic, err)
	}
	tc.known.Store(topic, struct{}{})
	return nil
}
