package kafka_test

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/xbot-runtime/xbot/infra/devstack/kafkatest"
	"github.com/xbot-runtime/xbot/infra/kafka"
)

func TestEnsureTopicsIsIdempotent(t *testing.T) {
	t.Parallel()
	kc := kafka.Config{Brokers: kafkatest.Shared(t).Addrs(), TopicPrefix: kafkatest.UniqueName(t) + ".", Partitions: 4}
	for i := range 2 {
		if err := kafka.EnsureTopics(testCtx(t), kc); err != nil {
			t.Fatalf("EnsureTopics call %d: %v", i+1, err)
		}
	}
	cl, err := kafka.NewClient(kc)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for _, topic := range []string{kc.CommandsTopic(), kc.EventsTopic(), kc.IMOutboxTopic(), kc.DeadLetterTopic()} {
		n, err := kafka.PartitionCount(testCtx(t), cl, topic)
		if err != nil {
			t.Fatal(err)
		}
		if n != 4 {
			t.Errorf("%s has %d partitions, want 4", topic, n)
		}
	}
}

// createTopic creates a topic by hand, as an operator would have.
func createTopic(t *testing.T, kc kafka.Config, topic string, partitions int32) {
	t.Helper()
	cl, err := kafka.NewClient(kc)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	res, err := kadm.NewClient(cl).CreateTopic(testCtx(t), partitions, -1, nil, topic)
	if err == nil {
		err = res.Err
	}
	if err != nil {
		t.Fatalf("create %s: %v", topic, err)
	}
}

func TestEnsureTopicsChecksExistingPartitionCounts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		cmds, evs    int32
		wantMismatch bool
	}{
		{name: "different counts", cmds: 3, evs: 5, wantMismatch: true},
		{name: "same counts other than configured", cmds: 2, evs: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			kc := kafka.Config{Brokers: kafkatest.Shared(t).Addrs(), TopicPrefix: kafkatest.UniqueName(t) + ".", Partitions: 4}
			createTopic(t, kc, kc.CommandsTopic(), tt.cmds)
			createTopic(t, kc, kc.EventsTopic(), tt.evs)
			err := kafka.EnsureTopics(testCtx(t), kc)
			if !tt.wantMismatch {
				if err != nil {
					t.Fatalf("EnsureTopics: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("EnsureTopics accepted commands and events topics with different partition counts")
			}
			for _, want := range []string{kc.CommandsTopic(), kc.EventsTopic()} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not name %s", err, want)
				}
			}
		})
	}
}
