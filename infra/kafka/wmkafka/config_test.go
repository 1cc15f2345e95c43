package wmkafka_test

import (
	"strings"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/infra/kafka/wmkafka"
)

func TestConfigValidateReportsEveryProblem(t *testing.T) {
	t.Parallel()
	err := wmkafka.PublisherConfig{PublishTimeout: -time.Second}.Validate()
	for _, want := range []string{"broker", "PublishTimeout"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("publisher Validate() = %v, want it to mention %s", err, want)
		}
	}
	ok := wmkafka.PublisherConfig{Kafka: kafka.Config{Brokers: []string{"127.0.0.1:1"}}}
	if err := ok.Validate(); err != nil {
		t.Errorf("defaults do not validate: %v", err)
	}
	if _, err := wmkafka.NewPublisher(wmkafka.PublisherConfig{}); err == nil {
		t.Error("NewPublisher without brokers succeeded")
	}
}
