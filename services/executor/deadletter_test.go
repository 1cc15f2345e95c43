package executor_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/contracttests"
	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/infra/kafka/partition"
	"github.com/xbot-runtime/xbot/services/executor"
)

// deadLetters returns the executor's dead letters by command id (or record
// key when the record named no command).
func deadLetters(t *testing.T, h *harness) map[string]kafka.Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out := map[string]kafka.Record{}
	err := kafka.ReadTopic(ctx, h.kcfg, h.kcfg.DeadLetterTopic(), func(r kafka.Record) error {
		if r.Headers[executor.HeaderSource] != "executor" {
			return nil
		}
		id := r.Headers[executor.HeaderCommandID]
		if id == "" {
			id = r.Key
		}
		out[id] = r
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// produceTo writes one record to partition p of the commands topic, as a
// client with broker access and its own partitioner could.
func produceTo(t *testing.T, h *harness, p int32, key string, value []byte, headers map[string]string) {
	t.Helper()
	cl, err := kafka.NewClient(h.kcfg, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	rec := &kgo.Record{Topic: h.kcfg.CommandsTopic(), Partition: p, Key: []byte(key), Value: value}
	for k, v := range headers {
		rec.Headers = append(rec.Headers, kgo.RecordHeader{Key: k, Value: []byte(v)})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, rec).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

func encode(t *testing.T, c commands.Envelope) []byte {
	t.Helper()
	raw, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// TestRefusedCommandRecordsAreDeadLettered: a record that is unsigned, signed
// by an unknown key, undecodable, invalid, keyed by another id or on a
// partition that does not own its run is dead-lettered with its reason;
// nothing is appended to any run, and the partition keeps admitting.
func TestRefusedCommandRecordsAreDeadLettered(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.startExecutor("ex1", nil)
	genuine := createRun(t, "acme", "genuine", "demo", "hello")
	h.send(genuine)
	h.waitFor("the genuine run completed", statusIs(genuine.RunID, events.StatusCompleted))
	before := len(types(t, h, genuine.RunID))
	home := partition.For(genuine.RunID, testPartitions)

	unsigned := createRun(t, "acme", "unsigned", "demo", "x")
	h.produce(unsigned.RunID, encode(t, unsigned), nil)
	foreign := createRun(t, "acme", "foreign", "demo", "x")
	raw := encode(t, foreign)
	h.produce(foreign.RunID, raw, commands.GenerateKeyRing().Sign(foreign.RunID, raw))
	h.produce(genuine.RunID, []byte(`{"commandId":`), h.keys.Sign(genuine.RunID, []byte(`{"commandId":`)))
	invalid := cancelRun(t, "acme", genuine.RunID, "invalid")
	invalid.Payload = json.RawMessage(`{"reason":7}`)
	h.sendRaw(invalid)
	misrouted := createRun(t, "acme", "misrouted", "demo", "x") // a second copy of the genuine run, elsewhere
	misrouted.RunID = genuine.RunID
	raw = encode(t, misrouted)
	produceTo(t, h, (home+1)%testPartitions, genuine.RunID, raw, h.keys.Sign(genuine.RunID, raw))
	rekeyed := cancelRun(t, "acme", genuine.RunID, "rekeyed")
	raw = encode(t, rekeyed)
	produceTo(t, h, home, "someone-else", raw, h.keys.Sign("someone-else", raw))
	after := createRun(t, "acme", "after", "demo", "x")
	h.send(after)

	want := map[string]string{
		unsigned.RunID: executor.ReasonUnauthenticated, foreign.RunID: executor.ReasonUnauthenticated,
		genuine.RunID: executor.ReasonUndecodable, invalid.CommandID: executor.ReasonInvalid,
		misrouted.CommandID: executor.ReasonMisrouted, rekeyed.CommandID: executor.ReasonMisrouted,
	}
	var letters map[string]kafka.Record
	h.waitFor("the later run and every dead letter", func(m map[string]events.RunState) bool {
		letters = deadLetters(t, h)
		return m[after.RunID].Status == events.StatusCompleted && len(letters) >= len(want)
	})
	for id, reason := range want {
		if got := letters[id].Headers[executor.HeaderDeadLetterReason]; got != reason {
			t.Errorf("dead letter for %s: reason %q, want %q (headers %v)", id, got, reason, letters[id].Headers)
		}
	}
	if h := letters[misrouted.CommandID].Headers; h[executor.HeaderExpectedPartition] == h[executor.HeaderSourcePartition] {
		t.Errorf("misrouted letter names expected partition %s = actual", h[executor.HeaderExpectedPartition])
	}
	if got := len(types(t, h, genuine.RunID)); got != before {
		t.Errorf("the genuine run has %d events after the refused records, want %d", got, before)
	}
	for _, c := range []commands.Envelope{unsigned, foreign} {
		if n := len(types(t, h, c.RunID)); n != 0 {
			t.Errorf("run %s of a refused record has %d events", c.RunID, n)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := contracttests.CommandsAccounted(ctx, h.kcfg); err != nil {
		t.Error(err)
	}
}
