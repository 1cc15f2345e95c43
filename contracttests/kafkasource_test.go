package contracttests_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/contracttests"
	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/devstack/kafkatest"
	"github.com/xbot-runtime/xbot/infra/kafka"
)

// recordingTB records Fatalf instead of stopping the test, so that the
// suite's own failures can be checked.
type recordingTB struct {
	testing.TB
	mu     sync.Mutex
	fatals []string
}

func (r *recordingTB) Helper() {}

func (r *recordingTB) Fatalf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fatals = append(r.fatals, fmt.Sprintf(format, args...))
}

func sliceSource(evs []events.Envelope, err error) contracttests.Source {
	return func(context.Context) ([]events.Envelope, error) { return evs, err }
}

func TestLogInvariant(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	ok := &recordingTB{TB: t}
	states := contracttests.LogInvariant(ctx, ok, sliceSource(seal(t, seq(runA, accepted, started)), nil))
	if len(ok.fatals) != 0 || states[runA.RunID].Status != events.StatusRunning {
		t.Errorf("clean log: fatals %q, states %+v", ok.fatals, states)
	}

	broken := &recordingTB{TB: t}
	contracttests.LogInvariant(ctx, broken, sliceSource(seal(t, []ev{{runA, 1, accepted}, {runA, 3, started}}), nil))
	if len(broken.fatals) != 1 || !strings.Contains(broken.fatals[0], runA.RunID) {
		t.Errorf("broken log: fatals %q, want one naming run %s", broken.fatals, runA.RunID)
	}

	unreadable := &recordingTB{TB: t}
	contracttests.LogInvariant(ctx, unreadable, sliceSource(nil, errors.New("store down")))
	if len(unreadable.fatals) == 0 || !strings.Contains(unreadable.fatals[0], "store down") {
		t.Errorf("failing source: fatals %q, want the source's error", unreadable.fatals)
	}
}

func TestMain(m *testing.M) { kafkatest.Main(m) }

// kafkaWithEvents starts a cluster and produces the envelopes (and raw
// records) keyed by run id to the events topic.
func kafkaWithEvents(t *testing.T, evs []events.Envelope, raw ...[]byte) kafka.Config {
	t.Helper()
	kc := kafkatest.NewConfig(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	prod, err := kafka.NewProducer(kc)
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	for _, e := range evs {
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		if err := prod.Produce(ctx, kc.EventsTopic(), e.RunID, b); err != nil {
			t.Fatal(err)
		}
	}
	for _, b := range raw {
		if err := prod.Produce(ctx, kc.EventsTopic(), "junk", b); err != nil {
			t.Fatal(err)
		}
	}
	return kc
}

func TestKafkaSource(t *testing.T) {
	t.Parallel()
	log := []ev{
		{runA, 1, accepted}, {runB, 1, accepted}, {runA, 2, started}, {runB, 2, started},
		{runA, 3, itemStarted}, {runA, 4, itemDone}, {runA, 5, completed},
	}
	kc := kafkaWithEvents(t, seal(t, log))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	states := contracttests.LogInvariant(ctx, t, contracttests.KafkaSource(kc))
	if a, b := states[runA.RunID], states[runB.RunID]; a.Status != events.StatusCompleted || a.LastSeq != 5 ||
		b.Status != events.StatusRunning || b.LastSeq != 2 {
		t.Fatalf("folded from Kafka: A %s/%d, B %s/%d", a.Status, a.LastSeq, b.Status, b.LastSeq)
	}
}

func TestKafkaSourceRejectsARecordThatIsNotAnEnvelope(t *testing.T) {
	t.Parallel()
	kc := kafkaWithEvents(t, nil, []byte(`{"hello":"world"}`))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := contracttests.KafkaSource(kc)(ctx)
	if err == nil || !strings.Contains(err.Error(), "offset 0") {
		t.Fatalf("KafkaSource error = %v, want one naming the record's partition and offset", err)
	}
}
