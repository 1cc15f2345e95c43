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
	"github.com/xbot-runtime/xbot/services/stack"
)

func create(t *testing.T, st *stack.Stack, agent, content, key string) map[string]any {
	t.Helper()
	code, body := call(t, st, "POST", "/v1/runs", token, map[string]any{"agentId": agent, "input": map[string]any{"content": content}},
		"Idempotency-Key", key)
	if code != 202 || body["runId"] == nil {
		t.Fatalf("create: HTTP %d %v", code, body)
	}
	return body
}

func TestRunCompletesThroughTheAPI(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	st := e.start("all", nil)
	res := create(t, st, "demo", "hello", "hello-1")
	if res["outcome"] != "accepted" {
		t.Fatalf("outcome %v", res["outcome"])
	}
	runID := res["runId"].(string)
	run := waitStatus(t, st, runID, "completed", 5*time.Second)
	if run["agentId"] != "demo" || run["tenantId"] != tenant {
		t.Fatalf("run %v", run)
	}
	evs := listEvents(t, st, runID)
	for i, ev := range evs {
		if int(ev["seq"].(float64)) != i+1 {
			t.Fatalf("event %d has seq %v", i, ev["seq"])
		}
	}
	if evs[0]["type"] != string(events.RunAccepted) || evs[len(evs)-1]["type"] != string(events.RunCompleted) {
		t.Fatalf("log runs from %v to %v", evs[0]["type"], evs[len(evs)-1]["type"])
	}
	var text strings.Builder
	for _, ev := range evs {
		if ev["type"] == string(events.ItemDelta) {
			text.WriteString(ev["payload"].(map[string]any)["delta"].(string))
		}
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
	code, body := call(t, st, "POST", "/v1/runs", token, `{"agentId":"demo","input":{}}`)
	if code != 422 || !strings.Contains(fmt.Sprint(body), "input.content") || body["code"] != "validation_failed" {
		t.Fatalf("malformed body: HTTP %d %v", code, body)
	}
	if code, body = call(t, st, "POST", "/v1/runs", "", map[string]any{"agentId": "demo"}); code != 401 || body["code"] != "unauthorized" {
		t.Fatalf("no token: HTTP %d %v", code, body)
	}
	if code, body = call(t, st, "GET", "/v1/runs/run_01J8XK8A1B2C3D4E5F6G7H8J9K", token, nil); code != 404 || body["code"] != "run_not_found" {
		t.Fatalf("unknown run: HTTP %d %v", code, body)
	}
	first := create(t, st, "demo", "once", "same-key")
	second := create(t, st, "demo", "once", "same-key")
	if second["outcome"] != "duplicate" || second["runId"] != first["runId"] || second["commandId"] != first["commandId"] {
		t.Fatalf("retry: first %v, second %v", first, second)
	}
	waitStatus(t, st, first["runId"].(string), "completed", 5*time.Second)
	if code, body = call(t, st, "GET", "/v1/runs/"+first["runId"].(string), "tok-other", nil); code != 404 {
		t.Fatalf("another tenant's run: HTTP %d %v", code, body)
	}
	code, body = call(t, st, "GET", "/v1/runs?status=completed", token, nil)
	if runs, _ := body["runs"].([]any); code != 200 || len(runs) != 1 {
		t.Fatalf("one run expected (the retry must not fork): HTTP %d %v", code, body)
	}
	bad := create(t, st, "no-such-agent", "x", "bad-agent")
	if bad["outcome"] != "rejected" || bad["code"] != "unknown_agent" {
		t.Fatalf("unknown agent: %v", bad)
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
	runID := create(t, st, "slow", "x", "slow-1")["runId"].(string)
	waitStatus(t, st, runID, "running", 5*time.Second)
	code, body := call(t, st, "POST", "/v1/runs/"+runID+"/inputs", token, map[string]any{"intent": "steer", "content": "shorter"})
	if code != 202 || body["outcome"] != "accepted" {
		t.Fatalf("steer while running: HTTP %d %v", code, body)
	}
	steerID := body["commandId"].(string)
	code, body = call(t, st, "POST", "/v1/runs/"+runID+"/cancel", token, map[string]any{"reason": "changed my mind"}, "Idempotency-Key", "cancel-1")
	if code != 202 || body["outcome"] != "accepted" {
		t.Fatalf("cancel running: HTTP %d %v", code, body)
	}
	run := waitStatus(t, st, runID, "cancelled", 5*time.Second)
	if run["cancelReason"] != "changed my mind" {
		t.Fatalf("cancel reason: %v", run)
	}
	// The steer was either applied before the cancel or closed by it; it
	// never stays pending on a finished run.
	eventually.Succeeds(t, 5*time.Second, "the steer closed", func() error {
		_, cmd := call(t, st, "GET", "/v1/commands/"+steerID, token, nil)
		if o := cmd["outcome"]; o != "applied" && o != "no_effect" {
			return fmt.Errorf("steer outcome %v", o)
		}
		return nil
	})
	done := create(t, st, "demo", "y", "demo-1")["runId"].(string)
	waitStatus(t, st, done, "completed", 5*time.Second)
	code, body = call(t, st, "POST", "/v1/runs/"+done+"/cancel", token, nil, "Idempotency-Key", "cancel-2")
	if code != 202 || body["outcome"] != "no_effect" {
		t.Fatalf("cancel completed: HTTP %d %v", code, body)
	}
	waitStatus(t, st, done, "completed", time.Second)
	code, body = call(t, st, "POST", "/v1/runs/"+done+"/inputs", token, map[string]any{"intent": "steer", "content": "faster"})
	if code != 202 || body["outcome"] != "rejected" || body["code"] != "invalid_state" {
		t.Fatalf("steer on a completed run: HTTP %d %v", code, body)
	}
	e.invariants(st)
}
