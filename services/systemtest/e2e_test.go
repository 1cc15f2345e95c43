package systemtest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/services/api/client"
)

func TestRunCompletesThroughTheAPI(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	st := e.start("all", nil)
	res := create(t, st, "demo", "hello", "hello-1")
	if res.Outcome != client.OutcomeAccepted {
		t.Fatalf("outcome %s", res.Outcome)
	}
	runID := res.RunID
	run := waitStatus(t, st, runID, "completed", 5*time.Second)
	if run.AgentID != "demo" || run.TenantID != tenant {
		t.Fatalf("run %+v", run)
	}
	evs := listEvents(t, st, runID)
	for i, ev := range evs {
		if ev.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d", i, ev.Seq)
		}
	}
	if evs[0].Type != events.RunAccepted || evs[len(evs)-1].Type != events.RunCompleted {
		t.Fatalf("log runs from %s to %s", evs[0].Type, evs[len(evs)-1].Type)
	}
	var text strings.Builder
	for _, d := range payloads[events.ItemDeltaPayload](t, st, runID) {
		text.WriteString(d.Delta)
	}
	if text.String() != "Hello from xbot! You said: hello" {
		t.Fatalf("streamed text %q", text.String())
	}
	e.invariants(st)
	checkKcat(t, e, runID, len(evs))
}

// checkKcat reads the topic with kcat, a Kafka client that is not ours.
func checkKcat(t *testing.T, e *env, runID string, want int) {
	t.Helper()
	path, err := exec.LookPath("kcat")
	if err != nil {
		t.Log("kcat not installed; skipping the external-client check (CI installs it)")
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "-b", e.kcfg.Brokers[0], "-C", "-t", e.kcfg.EventsTopic(),
		"-X", "isolation.level=read_committed", "-e", "-q").Output()
	if err != nil {
		t.Fatalf("kcat: %v", err)
	}
	seqs := []int64{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var ev events.Envelope
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("kcat printed a non-event line %q: %v", line, err)
		}
		if ev.RunID == runID {
			seqs = append(seqs, ev.Seq)
		}
	}
	if len(seqs) != want || seqs[0] != 1 || seqs[len(seqs)-1] != int64(want) {
		t.Fatalf("kcat saw seqs %v, want 1..%d", seqs, want)
	}
}

func TestAPIErrorsAndIdempotency(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	st := e.start("all", nil)
	ctx, api := t.Context(), apiOf(t, st)
	// A body the typed client cannot send: input without content.
	if ans := send(t, nil, st, "POST", "/v1/runs", token, `{"agentId":"demo","input":{}}`); ans.status != 422 ||
		!strings.Contains(ans.body, "input.content") || ans.code() != "validation_failed" {
		t.Fatalf("malformed body: HTTP %d %s", ans.status, ans.body)
	}
	if _, err := apiClient(t, st, "", nil).CreateRun(ctx, client.CreateRunRequest{AgentID: "demo"}, client.CommandOptions{}); !isProblem(err, 401, "unauthorized") {
		t.Fatalf("no token: %v", err)
	}
	if _, err := api.GetRun(ctx, "run_01J8XK8A1B2C3D4E5F6G7H8J9K"); !isProblem(err, 404, "run_not_found") {
		t.Fatalf("unknown run: %v", err)
	}
	first := create(t, st, "demo", "once", "same-key")
	second := create(t, st, "demo", "once", "same-key")
	if second.Outcome != client.OutcomeDuplicate || second.RunID != first.RunID || second.CommandID != first.CommandID {
		t.Fatalf("retry: first %+v, second %+v", first, second)
	}
	waitStatus(t, st, first.RunID, "completed", 5*time.Second)
	if _, err := apiClient(t, st, otherToken, nil).GetRun(ctx, first.RunID); !isProblem(err, 404, "run_not_found") {
		t.Fatalf("another tenant's run: %v", err)
	}
	if page, err := api.ListRuns(ctx, client.RunQuery{Status: "completed"}); err != nil || len(page.Runs) != 1 {
		t.Fatalf("one run expected (the retry must not fork): %+v %v", page, err)
	}
	bad := create(t, st, "no-such-agent", "x", "bad-agent")
	if bad.Outcome != client.OutcomeRejected || bad.Code != "unknown_agent" {
		t.Fatalf("unknown agent: %+v", bad)
	}
	states := e.invariants(st)
	if n := len(states); n != 2 {
		t.Fatalf("%d run logs, want 2 (one run, one rejected create)", n)
	}
}

func TestCancelRunningAndCompletedRuns(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	st := e.start("all", nil)
	runID := create(t, st, "hold", "x", "slow-1").RunID
	waitStatus(t, st, runID, "running", 5*time.Second)
	steer := input(t, st, runID, "steer", "shorter", "")
	if steer.Outcome != client.OutcomeAccepted {
		t.Fatalf("steer while running: %+v", steer)
	}
	if res := cancelRun(t, st, runID, "changed my mind", "cancel-1"); res.Outcome != client.OutcomeAccepted {
		t.Fatalf("cancel running: %+v", res)
	}
	run := waitStatus(t, st, runID, "cancelled", 5*time.Second)
	if run.CancelReason != "changed my mind" {
		t.Fatalf("cancel reason: %+v", run)
	}
	// The steer was either applied before the cancel or closed by it; it
	// never stays pending on a finished run.
	eventually.Succeeds(t, 5*time.Second, "the steer closed", func() error {
		cmd, err := apiOf(t, st).GetCommand(t.Context(), steer.CommandID)
		if err != nil {
			return err
		}
		if o := cmd.Outcome; o != client.OutcomeApplied && o != client.OutcomeNoEffect {
			return fmt.Errorf("steer outcome %s", o)
		}
		return nil
	})
	done := create(t, st, "demo", "y", "demo-1").RunID
	waitStatus(t, st, done, "completed", 5*time.Second)
	if res := cancelRun(t, st, done, "", "cancel-2"); res.Outcome != client.OutcomeNoEffect {
		t.Fatalf("cancel completed: %+v", res)
	}
	waitStatus(t, st, done, "completed", time.Second)
	if res := input(t, st, done, "steer", "faster", ""); res.Outcome != client.OutcomeRejected || res.Code != "invalid_state" {
		t.Fatalf("steer on a completed run: %+v", res)
	}
	e.invariants(st)
}
