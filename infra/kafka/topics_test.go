package kafka_test

import (
	"slices"
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

func TestEnsureTopicsKeepsTheLogForever(t *testing.T) {
	t.Parallel()
	kc := kafka.Config{Brokers: kafkatest.Shared(t).Addrs(), TopicPrefix: kafkatest.UniqueName(t) + ".", Partitions: 2}
	if err := kafka.EnsureTopics(testCtx(t), kc); err != nil {
		t.Fatal(err)
	}
	cl, err := kafka.NewClient(kc)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	configs, err := kadm.NewClient(cl).DescribeTopicConfigs(testCtx(t), kc.EventsTopic(), kc.DeadLetterTopic())
	if err != nil {
		t.Fatal(err)
	}
	for _, rc := range configs {
		got := map[string]string{}
		for _, c := range rc.Configs {
			if c.Value != nil {
				got[c.Key] = *c.Value
			}
		}
		if got["retention.ms"] != "-1" || got["retention.bytes"] != "-1" {
			t.Errorf("%s: retention.ms=%q retention.bytes=%q, want -1 and -1", rc.Name, got["retention.ms"], got["retention.bytes"])
		}
	}
	warnings, err := kafka.CheckTopics(testCtx(t), kc)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range warnings {
		if strings.Contains(w, "retention") || strings.Contains(w, "cleanup.policy") {
			t.Errorf("topics xbot created are reported at risk: %s", w)
		}
	}
}

func TestCheckTopicsNamesAFiniteRetentionOfTheLog(t *testing.T) {
	t.Parallel()
	kc := kafka.Config{Brokers: kafkatest.Shared(t).Addrs(), TopicPrefix: kafkatest.UniqueName(t) + ".", Partitions: 2}
	cl, err := kafka.NewClient(kc)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	// The operator created the events topic with Kafka's default of 7 days.
	week := "604800000"
	res, err := kadm.NewClient(cl).CreateTopic(testCtx(t), 2, -1, map[string]*string{"retention.ms": &week}, kc.EventsTopic())
	if err == nil {
		err = res.Err
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := kafka.EnsureTopics(testCtx(t), kc); err != nil {
		t.Fatal(err)
	}
	warnings, err := kafka.CheckTopics(testCtx(t), kc)
	if err != nil {
		t.Fatal(err)
	}
	want := kc.EventsTopic() + ": retention.ms=" + week
	if !slices.ContainsFunc(warnings, func(w string) bool { return strings.HasPrefix(w, want) }) {
		t.Errorf("warnings %q do not name %q", warnings, want)
	}
}
