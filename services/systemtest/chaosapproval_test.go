//go:build chaos

package systemtest_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/services/stack"
)

// TestChaosApprovalsUnderExecutorChurn decides approvals while executors are
// started, stopped and killed at random. Every decision is sent three times:
// twice with one idempotency key (a retry) and once with another (a second
// person clicking). Every run must complete and no approved tool may run twice.
func TestChaosApprovalsUnderExecutorChurn(t *testing.T) {
	t.Parallel()
	c := newChaos(t)
	rng := newRand(t)
	var live []*stack.Stack
	started, kills := 0, 0
	startOne := func() {
		started++
		live = append(live, c.stack(fmt.Sprintf("ex%d", started), nil, stack.Executor))
	}
	startOne()
	startOne()
	ids := c.createRunsOf("approver", "appr", chaosN(60, 20))
	sent := map[string]bool{}
	decisions, duplicates, refused := 0, 0, 0
	c.untilTerminal(ids, 4*time.Minute, chaosDuration(300*time.Millisecond, 200*time.Millisecond), func() {
		_, body := call(t, c.front, "GET", "/v1/approvals?status=pending&limit=100", token, nil)
		items, _ := body["approvals"].([]any)
		for _, a := range items {
			ap := a.(map[string]any)
			run, item := ap["runId"].(string), ap["itemId"].(string)
			if sent[item] {
				continue // decided; the view has not caught up yet, or the command waits for a new owner
			}
			sent[item] = true
			decision := map[string]any{"itemId": item, "decision": "allow", "scope": "item"}
			for i, key := range []string{item + "-a", item + "-a", item + "-b"} {
				code, res := call(t, c.front, "POST", "/v1/runs/"+run+"/approval-decisions?wait=0", token, decision, "Idempotency-Key", key)
				if code != 202 {
					t.Errorf("decision %d for %s: HTTP %d %v", i, item, code, res)
				}
			}
			decisions++
		}
		switch a := rng.IntN(4); {
		case a == 0 && len(live) < 3 || len(live) < 2:
			startOne()
		case a == 1:
			i := rng.IntN(len(live))
			live[i].Executor.Kill()
			live, kills = append(live[:i], live[i+1:]...), kills+1
		default:
		}
	})
	states := c.check(c.front, ids)
	for _, id := range ids {
		for _, p := range states[id].Pending {
			t.Errorf("run %s ended with command %s pending", id, p.CommandID)
		}
	}
	for _, ev := range c.kafkaEvents() {
		if ev.Type == "runtime.command.duplicate" {
			duplicates++
		}
		if ev.Type == "runtime.command.rejected" {
			refused++
		}
	}
	t.Logf("approvals: %d items decided (3 commands each), %d duplicates, %d rejected; %d executors started, %d killed",
		decisions, duplicates, refused, started, kills)
	if decisions < len(ids) {
		t.Errorf("%d approvals decided for %d runs", decisions, len(ids))
	}
}
