//go:build chaos

package systemtest_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/services/api/client"
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
	sent, api := map[string]bool{}, apiOf(t, c.front)
	var commandIDs []string
	decisions, duplicates, refused := 0, 0, 0
	c.untilTerminal(ids, 4*time.Minute, chaosDuration(300*time.Millisecond, 200*time.Millisecond), func() {
		pending, err := api.ListApprovals(t.Context(), client.ApprovalQuery{Status: client.ApprovalPending, Page: client.Page{Limit: 100}})
		if err != nil {
			t.Logf("pending approvals: %v", err) // the next tick reads them again
		}
		for _, ap := range pending.Approvals {
			if sent[ap.ItemID] {
				continue // decided; the view has not caught up yet, or the command waits for a new owner
			}
			sent[ap.ItemID] = true
			decision := client.ApprovalDecisionRequest{ItemID: ap.ItemID, Decision: "allow", Scope: "item"}
			for i, key := range []string{ap.ItemID + "-a", ap.ItemID + "-a", ap.ItemID + "-b"} {
				res, err := api.DecideApproval(t.Context(), ap.RunID, decision, client.CommandOptions{IdempotencyKey: key, Wait: client.WaitFor(0)})
				if err != nil {
					t.Errorf("decision %d for %s: %v", i, ap.ItemID, err)
					continue
				}
				commandIDs = append(commandIDs, res.CommandID)
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
	// A decision sent while its partition had no owner is admitted when one
	// takes it, possibly after every run ended (answered duplicate or
	// rejected): the log grows until then, and the checks compare the live
	// view with one rebuilt from the log.
	eventually.Succeeds(t, 2*time.Minute, "every decision has its outcome", func() error {
		for len(commandIDs) > 0 {
			cmd, err := api.GetCommand(t.Context(), commandIDs[0])
			if err != nil {
				return err
			}
			if cmd.Outcome == client.OutcomePending || cmd.Outcome == client.OutcomeAccepted {
				return fmt.Errorf("command %s is %s", cmd.CommandID, cmd.Outcome)
			}
			commandIDs = commandIDs[1:]
		}
		return nil
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
