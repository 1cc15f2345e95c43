package systemtest_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/infra/kafka/partition"
	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/stack"
)

// span is when a run held its sandbox key: from runtime.run.started to its
// terminal event (ms, from the events).
type span struct {
	run        string
	start, end int64
}

func spanOf(t *testing.T, st *stack.Stack, runID string) span {
	t.Helper()
	s := span{run: runID}
	for _, ev := range listEvents(t, st, runID) {
		switch ev.Type {
		case events.RunStarted:
			s.start = ev.OccurredAt
		case events.RunCompleted, events.RunFailed, events.RunCancelled, events.RunExpired:
			s.end = ev.OccurredAt
		}
	}
	if s.start == 0 || s.end == 0 {
		t.Fatalf("run %s has no start or end: %+v", runID, s)
	}
	return s
}

// TestRunsOfOneSandboxKeyRunOneAtATime tries to make two runs of one sandbox
// key run at once: three runs created together on one key, a fourth on
// another key, two executors, and the executor owning the key's partition
// killed while the second run holds the key. The key's runs must run
// strictly one after another, in the order they were created, the new owner
// carrying on with the queue; the other key's run runs in parallel.
func TestRunsOfOneSandboxKeyRunOneAtATime(t *testing.T) {
	t.Parallel()
	// The tool waits for a gate, so the first run holds the key until the
	// test has seen the queue; then each run works for a second.
	gate := filepath.Join(t.TempDir(), "gate")
	work := profile.Turn{Text: "Working.", ToolCalls: call1("shell",
		fmt.Sprintf(`{"command":"while [ ! -f %s ]; do sleep 0.02; done; sleep 1"}`, gate))}
	a := profile.Profile{ID: "serial", Model: profile.ModelScripted, Tools: []string{"shell"},
		Script: []profile.Turn{work, {Text: "Done."}}}
	b := a
	b.ID = "other"
	e, front, executor := crashEnv(t, a, b)
	exes := []*stack.Stack{executor("exA", nil), executor("exB", nil)}
	// The group settles first: a rebalance moving the first run's partition
	// after it started would end its tool call as runtime_lost, and the key
	// would be free before the test opens the gate.
	eventually.Succeeds(t, 30*time.Second, "both executors own partitions", func() error {
		a, b := exes[0].Executor.Partitions(), exes[1].Executor.Partitions()
		if len(a) == 0 || len(b) == 0 || len(a)+len(b) != int(e.kcfg.Partitions) {
			return fmt.Errorf("exA owns %v, exB %v", a, b)
		}
		return nil
	})

	var ids []string
	for i := range 3 {
		ids = append(ids, create(t, front, "serial", fmt.Sprintf("job %d", i), fmt.Sprintf("serial-%d", i)).RunID)
	}
	other := create(t, front, "other", "job", "other-0").RunID
	part := partition.For(ids[0], int(e.kcfg.Partitions))
	for _, id := range ids[1:] {
		if p := partition.For(id, int(e.kcfg.Partitions)); p != part {
			t.Fatalf("runs of one sandbox key on partitions %d and %d", part, p)
		}
	}

	// While the first runs, the last waits with two runs ahead of it.
	waitStatus(t, front, ids[0], "running", 20*time.Second)
	api := apiOf(t, front)
	eventually.Succeeds(t, 10*time.Second, "the third run's queue position", func() error {
		run, err := api.GetRun(t.Context(), ids[2])
		if err != nil {
			return err
		}
		if run.Status != "queued" || run.QueuePosition == nil || *run.QueuePosition != 2 {
			return fmt.Errorf("run %+v", run)
		}
		return nil
	})
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	eventually.Succeeds(t, 20*time.Second, "the second run started", func() error {
		run, err := api.GetRun(t.Context(), ids[1])
		if err == nil && run.Status == "queued" {
			err = fmt.Errorf("run %+v", run)
		}
		return err
	})
	for _, ex := range exes {
		if slices.Contains(ex.Executor.Partitions(), part) {
			ex.Executor.Kill() // the other executor takes the partition, its runs and its queue over
		}
	}
	executor("exC", nil)

	for _, id := range append(slices.Clone(ids), other) {
		waitStatus(t, front, id, "completed", 60*time.Second)
	}
	var spans []span
	for _, id := range ids {
		spans = append(spans, spanOf(t, front, id))
	}
	if !sort.SliceIsSorted(spans, func(i, j int) bool { return spans[i].start < spans[j].start }) {
		t.Errorf("runs started out of order: %+v", spans)
	}
	for i := 1; i < len(spans); i++ {
		if spans[i].start < spans[i-1].end {
			t.Errorf("run %s started at %d, before run %s ended at %d: two runs held one sandbox key",
				spans[i].run, spans[i].start, spans[i-1].run, spans[i-1].end)
		}
	}
	o := spanOf(t, front, other)
	if o.start >= spans[0].end {
		t.Errorf("the run on another key started at %d, only after the first run ended at %d: not in parallel", o.start, spans[0].end)
	}
	e.invariants(front)
}
