package runner_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/projections/runner"
)

// TestLingerHoldsRecordsUntilABatchIsReady: with a Linger, the broker holds
// the runner's fetch until MaxBatchBytes of records are ready (or the
// Linger, here far longer than the test, has passed), so records written one
// transaction at a time reach the view together, not one by one.
func TestLingerHoldsRecordsUntilABatchIsReady(t *testing.T) {
	t.Parallel()
	kc := cluster(t)
	v := newMemView()
	const batchBytes = 8 << 10
	startWith(t, kc, v, func(c *runner.Config) { c.Linger, c.MaxBatchBytes = runner.MaxLinger, batchBytes })

	// Runs of three events, each event produced on its own, until twice a
	// batch's bytes are in the topic.
	written := 0
	for i := 0; written < 2*batchBytes; i++ {
		written += writeRunBytes(t, kc, fmt.Sprintf("run_01J0000000000000000000L%03d", i))
	}
	var first []runner.Record
	eventually.Succeeds(t, runnerWait, "a batch applied", func() error {
		v.mu.Lock()
		defer v.mu.Unlock()
		if len(v.batches) == 0 {
			return errors.New("nothing applied yet")
		}
		first = v.batches[0]
		return nil
	})
	size := 0
	for _, r := range first {
		size += len(r.Value)
	}
	// A fetch counts record batches with their headers towards the bytes it
	// waits for, so the values of the first batch are somewhat fewer bytes.
	if size < batchBytes/2 {
		t.Errorf("the first batch holds %d records, %d bytes: applied before a batch's worth (%d bytes) was ready",
			len(first), size, batchBytes)
	}
}

// TestLingerIsBounded: a negative Linger or one beyond MaxLinger is refused
// by name.
func TestLingerIsBounded(t *testing.T) {
	t.Parallel()
	for _, d := range []time.Duration{-time.Millisecond, runner.MaxLinger + time.Millisecond} {
		err := runner.Config{Kafka: kafka.Config{Brokers: []string{"127.0.0.1:1"}}, Projector: newMemView(),
			Logger: zap.NewNop(), Linger: d}.Validate()
		if err == nil || !strings.Contains(err.Error(), "Linger") {
			t.Errorf("Linger %s: %v, want an error naming Linger", d, err)
		}
	}
}

// writeRunBytes writes a completed run of three events and returns the
// bytes of their values.
func writeRunBytes(t *testing.T, kc kafka.Config, runID string) int {
	t.Helper()
	n := 0
	writeRunWith(t, kc, runID, events.RunCompleted, func(raw []byte) { n += len(raw) })
	return n
}
