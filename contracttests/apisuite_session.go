package contracttests

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/xbot-runtime/xbot/services/api/client"
)

// sessionRow is a state of a session's head run, how to reach it (the
// session's first run, created in a workspace of its own), and what a
// message and an interrupt get there (docs/sessions.md).
type sessionRow struct {
	state     string
	build     func(ctx context.Context, r *runs, session string) error
	message   outcome // Code holds the intent the message became
	interrupt outcome
}

func sessionRows() []sessionRow {
	in := func(agent, status, pause string) func(ctx context.Context, r *runs, session string) error {
		return func(ctx context.Context, r *runs, session string) error {
			id, err := r.create(ctx, agent, r.name("ws"), session, "conformance")
			if err == nil {
				_, err = await(ctx, r.c, id, status, pause)
			}
			return err
		}
	}
	return []sessionRow{
		{"queued", sessionQueued, outcome{client.OutcomeAccepted, client.IntentSteer}, wApplied},
		{"running", in(AgentSlow, "running", ""), outcome{client.OutcomeAccepted, client.IntentSteer}, wAccepted},
		{"paused/awaiting_approval", in(AgentApproval, "paused", "awaiting_approval"),
			outcome{client.OutcomeAccepted, client.IntentQueued}, wApplied},
		{"paused/awaiting_user_input", in(AgentQuestion, "paused", "awaiting_user_input"),
			outcome{client.OutcomeAccepted, client.IntentClarification}, wApplied},
		{"completed", in(AgentDemo, "completed", ""), outcome{client.OutcomeApplied, client.IntentFollowUp}, wNoEffect},
	}
}

// sessionQueued makes the session's head a run queued behind another run of
// its sandbox.
func sessionQueued(ctx context.Context, r *runs, session string) error {
	ws := r.name("queued")
	blocker, err := r.create(ctx, AgentSlow, ws, "", "block the sandbox")
	if err == nil {
		_, err = await(ctx, r.c, blocker, "running", "")
	}
	if err != nil {
		return err
	}
	id, err := r.create(ctx, AgentSlow, ws, session, "wait for the sandbox")
	if err == nil {
		_, err = await(ctx, r.c, id, "queued", "")
	}
	return err
}

// sessionIntents sends a message and an interrupt to sessions whose head is
// in each state (two sessions per state: both change it).
func (s *apiSuite) sessionIntents(ctx context.Context) error {
	r := newRuns(s.main(), "session-intents")
	defer r.cleanup()
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for _, row := range sessionRows() {
		for _, interrupt := range []bool{false, true} {
			wg.Go(func() {
				err := s.sessionIntent(ctx, r, row, interrupt)
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			})
		}
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (s *apiSuite) sessionIntent(ctx context.Context, r *runs, row sessionRow, interrupt bool) error {
	session := r.name("session")
	if err := row.build(ctx, r, session); err != nil {
		return fmt.Errorf("a session whose head is %s: %w", row.state, err)
	}
	var res client.SessionCommandResult
	var err error
	want, what := row.message, "a message"
	if interrupt {
		want, what = row.interrupt, "an interrupt"
		res, err = r.c.InterruptSession(ctx, session, client.InterruptRequest{}, client.CommandOptions{})
	} else {
		// A long wait: the answer carries the intent only when the outcome came
		// within it.
		res, err = r.c.SendSessionMessage(ctx, session, client.SessionMessageRequest{Content: "blue"},
			client.CommandOptions{Wait: client.WaitFor(messageWait)})
	}
	r.track(res.RunID)
	got, err := answered(client.CommandResult{Outcome: res.Outcome, Code: res.Code}, err)
	if err != nil {
		return fmt.Errorf("%s to a session whose head is %s: %w", what, row.state, err)
	}
	if !interrupt {
		got.Code = res.Intent
	}
	if got != want {
		return fmt.Errorf("%s to a session whose head is %s: %s (%s), want %s", what, row.state, got, res.Detail, want)
	}
	return nil
}

// messageWait is the ?wait= of a session message whose intent a check
// compares: the answer says the intent only when the outcome came within
// the wait (the server caps it at its own maximum).
const messageWait = 30 * time.Second
