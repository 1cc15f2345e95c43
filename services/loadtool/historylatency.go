package loadtool

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/api/client"
)

// latencies times, Reps times each, against the executor that took over: a
// fresh run, the follow-up of that run (the second run of its session) and
// the next follow-up of the long session. Each counts from sending the
// command to the API until the new run's end is committed.
func (hs *history) latencies(ctx context.Context, fig *HistorySize) error {
	for range hs.h.Reps {
		fresh, root, err := hs.fresh(ctx, historyAgent)
		if err != nil {
			return err
		}
		fig.FreshRunMs.add(fresh)
		second, _, err := hs.followUp(ctx, root)
		if err != nil {
			return err
		}
		fig.FollowUpMs.add(second)
		long, next, err := hs.followUp(ctx, hs.session)
		if err != nil {
			return err
		}
		hs.session, hs.sessionRuns = next, hs.sessionRuns+1
		fig.SessionFollowUpMs.add(long)
		fig.SessionRuns = hs.sessionRuns
	}
	fig.FollowUpExtraMs = fig.FollowUpMs.median() - fig.FreshRunMs.median()
	fig.SessionFollowUpExtraMs = fig.SessionFollowUpMs.median() - fig.FreshRunMs.median()
	return nil
}

// buildSession starts the long session: a run and follow-ups until the
// session has Session-1 runs, so that the first timed follow-up is its
// Session-th.
func (hs *history) buildSession(ctx context.Context) error {
	_, id, err := hs.fresh(ctx, historyAgent)
	if err != nil {
		return err
	}
	hs.session, hs.sessionRuns = id, 1
	for hs.sessionRuns < hs.h.Session-1 {
		if _, hs.session, err = hs.followUp(ctx, hs.session); err != nil {
			return err
		}
		hs.sessionRuns++
	}
	fmt.Fprintf(os.Stderr, "xbot bench --history: a session of %d runs is in the history\n", hs.sessionRuns)
	return nil
}

// fresh creates a run of agent through the API and returns how long it
// took until its end was committed, and its id.
func (hs *history) fresh(ctx context.Context, agent string) (float64, string, error) {
	t0, id, err := hs.startRun(ctx, agent)
	if err != nil {
		return 0, "", err
	}
	d, err := hs.completedSince(ctx, id, t0)
	return d, id, err
}

// followUp follows parent up once it reads completed, and returns how long
// the follow-up took from its command until the new run's end was
// committed, and the new run's id.
func (hs *history) followUp(ctx context.Context, parent string) (float64, string, error) {
	wctx, cancel := context.WithTimeout(ctx, acceptWait)
	_, err := hs.c.AwaitRun(wctx, parent, func(r client.Run) bool { return r.Status == string(events.StatusCompleted) })
	cancel()
	if err != nil {
		return 0, "", err
	}
	hs.seq++
	t0 := time.Now()
	res, err := hs.c.AppendInput(ctx, parent, client.AppendInputRequest{Intent: "follow_up", Content: "and again"},
		client.CommandOptions{IdempotencyKey: fmt.Sprintf("measure-%s-%d", hs.nonce, hs.seq), Wait: client.WaitFor(acceptWait)})
	if err != nil {
		return 0, "", fmt.Errorf("follow-up of %s: %w", parent, err)
	}
	if res.CreatedRunID == "" {
		return 0, "", fmt.Errorf("follow-up of %s: outcome %q %s, no run created", parent, res.Outcome, res.Detail)
	}
	d, err := hs.completedSince(ctx, res.CreatedRunID, t0)
	return d, res.CreatedRunID, err
}

// completedSince waits for run id's end and returns the milliseconds from
// t0 to it; a run that ended other than completed is an error.
func (hs *history) completedSince(ctx context.Context, id string, t0 time.Time) (float64, error) {
	wctx, cancel := context.WithTimeout(ctx, acceptWait)
	defer cancel()
	e, err := hs.b.w.endedAt(wctx, id)
	if err != nil {
		return 0, fmt.Errorf("run %s did not end: %w", id, err)
	}
	if e.status != events.RunCompleted {
		return 0, fmt.Errorf("run %s ended %s, want %s", id, e.status, events.RunCompleted)
	}
	return ms(e.at.Sub(t0)), nil
}
