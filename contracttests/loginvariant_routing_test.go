package contracttests_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/contracttests"
	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/infra/kafka/partition"
)

// produceAt writes value keyed key to partition p of topic.
func produceAt(t *testing.T, kc kafka.Config, topic string, p int32, key string, value []byte) {
	t.Helper()
	cl, err := kafka.NewClient(kc, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Partition: p, Key: []byte(key), Value: value}).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// TestKafkaSourceRejectsAnEventOffItsRunsPartition: a run's event on a
// partition other than partition.For(runId), or keyed by another id, breaks
// the log invariant, even when its seq fits.
func TestKafkaSourceRejectsAnEventOffItsRunsPartition(t *testing.T) {
	t.Parallel()
	evs := seal(t, seq(runA, accepted, started))
	kc := kafkaWithEvents(t, evs[:1])
	raw, _ := json.Marshal(evs[1])
	home := partition.For(runA.RunID, 3)
	produceAt(t, kc, kc.EventsTopic(), (home+1)%3, runA.RunID, raw)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := contracttests.KafkaSource(kc)(ctx)
	if err == nil || !strings.Contains(err.Error(), "is not on its partition") {
		t.Fatalf("KafkaSource error = %v, want the misplaced event named", err)
	}
	rekeyed := kafkaWithEvents(t, evs[:1])
	produceAt(t, rekeyed, rekeyed.EventsTopic(), home, "not-the-run", raw)
	if _, err := contracttests.KafkaSource(rekeyed)(ctx); err == nil || !strings.Contains(err.Error(), "not-the-run") {
		t.Fatalf("KafkaSource error = %v, want the event keyed by another id named", err)
	}
}

// TestCommandsAccountedFindsAnUnansweredCommand: a command record that no
// event names and no dead letter names is reported.
func TestCommandsAccountedFindsAnUnansweredCommand(t *testing.T) {
	t.Parallel()
	kc := kafkaWithEvents(t, seal(t, seq(runA, accepted)))
	c, err := commands.New(commands.CancelRun, commands.Header{RunID: runA.RunID, TenantID: "acme",
		Actor: events.Actor{Type: "user", ID: "u"}}, commands.CancelRunPayload{})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(c)
	produceAt(t, kc, kc.CommandsTopic(), partition.For(runA.RunID, 3), runA.RunID, raw)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := contracttests.CommandsAccounted(ctx, kc); err == nil || !strings.Contains(err.Error(), c.CommandID) {
		t.Fatalf("CommandsAccounted = %v, want command %s named", err, c.CommandID)
	}
}
