package contracttests

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/xbot-runtime/xbot/services/api/client"
)

// An intent is one command a client can send to a run.
type intent struct {
	name string
	send func(ctx context.Context, c *client.Client, run stateRun) (client.CommandResult, error)
}

// stateRun is a run in the state its row names; item is its pending
// approval's item, if any.
type stateRun struct{ id, item string }

var (
	iCancel = intent{"cancel", func(ctx context.Context, c *client.Client, r stateRun) (client.CommandResult, error) {
		return c.CancelRun(ctx, r.id, "conformance", client.CommandOptions{})
	}}
	iSteer      = inputIntent(client.IntentSteer)
	iFollowUp   = inputIntent(client.IntentFollowUp)
	iClarify    = inputIntent(client.IntentClarification)
	iApproval   = intent{"approval", decideIntent}
	iCompaction = intent{"compaction", compactIntent}
)

func inputIntent(name string) intent {
	return intent{name, func(ctx context.Context, c *client.Client, r stateRun) (client.CommandResult, error) {
		return c.AppendInput(ctx, r.id, client.AppendInputRequest{Intent: name, Content: "blue"}, client.CommandOptions{})
	}}
}

// decideIntent allows the run's pending approval, or (a run without one)
// names an item that does not exist: the state is checked first.
func decideIntent(ctx context.Context, c *client.Client, r stateRun) (client.CommandResult, error) {
	item := r.item
	if item == "" {
		item = "itm_00000000000000000000000000"
	}
	return c.DecideApproval(ctx, r.id, client.ApprovalDecisionRequest{ItemID: item, Decision: "allow", Scope: "item"},
		client.CommandOptions{})
}

func compactIntent(ctx context.Context, c *client.Client, r stateRun) (client.CommandResult, error) {
	return c.CompactRun(ctx, r.id, "conformance", client.CommandOptions{})
}

// The outcomes the protocol decides (commands/admit_test.go's matrix).
var (
	wAccepted = outcome{client.OutcomeAccepted, ""}
	wApplied  = outcome{client.OutcomeApplied, ""}
	wNoEffect = outcome{client.OutcomeNoEffect, ""}
	wBadState = outcome{client.OutcomeRejected, "invalid_state"}
)

// stateRow is a run state, how to reach it, and the intents to send to
// runs in it: one run per list, in order, the one that changes the state
// last.
type stateRow struct {
	state string
	build func(ctx context.Context, r *runs) (stateRun, error)
	sends [][]intent
	want  map[string]outcome
}

func ended(build func(ctx context.Context, r *runs) (stateRun, error), state string) stateRow {
	return stateRow{state, build, [][]intent{{iSteer, iClarify, iApproval, iCompaction, iCancel, iFollowUp}},
		map[string]outcome{"cancel": wNoEffect, "steer": wBadState, "follow_up": wApplied, "clarification": wBadState,
			"approval": wBadState, "compaction": wBadState}}
}

func stateRows() []stateRow {
	return []stateRow{
		{"queued", buildQueued, [][]intent{{iSteer, iFollowUp, iClarify, iApproval, iCompaction, iCancel}},
			map[string]outcome{"cancel": wApplied, "steer": wBadState, "follow_up": wBadState, "clarification": wBadState,
				"approval": wBadState, "compaction": wBadState}},
		{"running", buildRunning, [][]intent{{iSteer, iFollowUp, iClarify, iApproval, iCompaction, iCancel}},
			map[string]outcome{"cancel": wAccepted, "steer": wAccepted, "follow_up": wBadState, "clarification": wBadState,
				"approval": wBadState, "compaction": wAccepted}},
		{"paused/awaiting_approval", buildApprovalPause, [][]intent{{iSteer, iFollowUp, iClarify, iApproval}, {iCompaction}, {iCancel}},
			map[string]outcome{"cancel": wApplied, "steer": wBadState, "follow_up": wBadState, "clarification": wBadState,
				"approval": wApplied, "compaction": wAccepted}},
		{"paused/awaiting_user_input", buildQuestionPause, [][]intent{{iSteer, iFollowUp, iApproval, iClarify}, {iCompaction}, {iCancel}},
			map[string]outcome{"cancel": wApplied, "steer": wBadState, "follow_up": wBadState, "clarification": wAccepted,
				"approval": wBadState, "compaction": wAccepted}},
		ended(buildEnded(AgentDemo, "completed"), "completed"),
		ended(buildEnded(AgentFail, "failed"), "failed"),
		ended(buildCancelled, "cancelled"),
		ended(buildEnded(AgentExpire, "expired"), "expired"),
	}
}

// intents sends every intent to runs in every state, each row's runs
// built in parallel, and compares each outcome with the protocol's.
func (s *apiSuite) intents(ctx context.Context) error {
	r := newRuns(s.main(), "intents")
	defer r.cleanup()
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for _, row := range stateRows() {
		for _, sends := range row.sends {
			wg.Go(func() {
				err := s.intentRun(ctx, r, row, sends)
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			})
		}
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (s *apiSuite) intentRun(ctx context.Context, r *runs, row stateRow, sends []intent) error {
	run, err := row.build(ctx, r)
	if err != nil {
		return fmt.Errorf("%s: %w", row.state, err)
	}
	var errs []error
	for _, in := range sends {
		res, err := in.send(ctx, r.c, run)
		r.track(res.CreatedRunID)
		got, err := answered(res, err)
		if err != nil {
			return errors.Join(append(errs, fmt.Errorf("%s on a %s run: %w", in.name, row.state, err))...)
		}
		if want := row.want[in.name]; got != want {
			errs = append(errs, fmt.Errorf("%s on a %s run %s: %s (%s), want %s", in.name, row.state, run.id, got, res.Detail, want))
		}
	}
	return errors.Join(errs...)
}
