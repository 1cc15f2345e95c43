package kafka_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/xbot-runtime/xbot/infra/devstack/kafkatest"
	"github.com/xbot-runtime/xbot/infra/kafka"
)

func TestOutboxKeepsEachKeysOrderOnOnePartition(t *testing.T) {
	t.Parallel()
	kc := kafkatest.NewTopics(t, 6)
	ob, err := kafka.NewOutbox(kc, kc.IMOutboxTopic())
	if err != nil {
		t.Fatal(err)
	}
	defer ob.Close()
	const keys, perCall = 5, 4
	var want []kafka.OutRecord
	for call := range 3 {
		var recs []kafka.OutRecord
		for i := range keys * perCall { // keys interleaved within a call
			recs = append(recs, kafka.OutRecord{Key: fmt.Sprintf("sess_%d", i%keys), Value: fmt.Appendf(nil, "%d-%d", call, i)})
		}
		if err := ob.Publish(testCtx(t), recs); err != nil {
			t.Fatal(err)
		}
		want = append(want, recs...)
	}
	if err := ob.Publish(testCtx(t), nil); err != nil {
		t.Errorf("publishing nothing: %v", err)
	}
	got := map[string][]string{}
	parts := map[string]map[int32]bool{}
	err = kafka.ReadTopic(testCtx(t), kc, kc.IMOutboxTopic(), func(r kafka.Record) error {
		got[r.Key] = append(got[r.Key], string(r.Value))
		if parts[r.Key] == nil {
			parts[r.Key] = map[int32]bool{}
		}
		parts[r.Key][r.Partition] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for k := range keys {
		key := fmt.Sprintf("sess_%d", k)
		var exp []string
		for _, r := range want {
			if r.Key == key {
				exp = append(exp, string(r.Value))
			}
		}
		if !slices.Equal(got[key], exp) || len(parts[key]) != 1 {
			t.Errorf("key %s: got %q on partitions %v, want %q on one partition", key, got[key], parts[key], exp)
		}
	}
}

func TestOutboxRefusesOtherTopics(t *testing.T) {
	t.Parallel()
	kc := kafkatest.NewTopics(t, 1)
	ob, err := kafka.NewOutbox(kc, kc.IMOutboxTopic())
	if err != nil {
		t.Fatal(err)
	}
	defer ob.Close()
	if err := ob.Publish(testCtx(t), []kafka.OutRecord{{Key: "k", Value: []byte("v"), Topic: kc.EventsTopic()}}); err == nil {
		t.Error("publishing to the events topic through the outbox succeeded")
	}
	if _, err := kafka.NewOutbox(kc, ""); err == nil {
		t.Error("an outbox without a topic was created")
	}
}
