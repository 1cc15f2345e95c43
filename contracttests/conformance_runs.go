package contracttests

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/api/client"
)

// runs creates the runs of one check and cancels, when the check ends,
// every one that may still be going (a slow run, a follow-up's next run).
type runs struct {
	c     *client.Client
	mu    sync.Mutex
	ids   []string
	nonce string
	n     int
}

func newRuns(c *client.Client, prefix string) *runs { return &runs{c: c, nonce: freshID(prefix)} }

// name is a fresh id of this check for a workspace, session or key.
func (r *runs) name(what string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n++
	return fmt.Sprintf("%s-%s-%d", r.nonce, what, r.n)
}

func (r *runs) track(ids ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, id := range ids {
		if id != "" {
			r.ids = append(r.ids, id)
		}
	}
}

// cleanupTimeout bounds the cancels of a check's leftover runs.
const cleanupTimeout = 30 * time.Second

// cleanup cancels every tracked run; an ended one answers no_effect.
func (r *runs) cleanup() {
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	r.mu.Lock()
	ids := append([]string(nil), r.ids...)
	r.mu.Unlock()
	for _, id := range ids {
		_, _ = r.c.CancelRun(ctx, id, "conformance suite cleanup", client.CommandOptions{})
	}
}

// create creates a run of agent in workspace ws (and session, when not
// empty) and tracks it.
func (r *runs) create(ctx context.Context, agent, ws, session, content string) (string, error) {
	res, err := r.c.CreateRun(ctx, client.CreateRunRequest{AgentID: agent, Input: client.UserInput{Content: content},
		PlatformSessionID: session, SandboxKey: &client.SandboxKeyRequest{WorkspaceID: ws}}, client.CommandOptions{})
	if err != nil {
		return "", fmt.Errorf("create a run of %s: %w", agent, err)
	}
	r.track(res.RunID)
	if res.Outcome != client.OutcomeAccepted {
		return res.RunID, fmt.Errorf("create a run of %s: outcome %s %s", agent, res.Outcome, res.Code)
	}
	return res.RunID, nil
}

// await waits until run runID is in status (for paused, with pauseReason
// pause) and returns it; a run that ends in another status fails at once.
func await(ctx context.Context, c *client.Client, runID, status, pause string) (client.Run, error) {
	run, err := c.AwaitRun(ctx, runID, func(r client.Run) bool {
		return (r.Status == status && (pause == "" || r.PauseReason == pause)) || events.Status(r.Status).Terminal()
	})
	if err != nil {
		return run, err
	}
	if run.Status != status || (pause != "" && run.PauseReason != pause) {
		return run, fmt.Errorf("run %s is %s %s (%s), want %s %s", runID, run.Status, run.PauseReason, run.ErrorCode, status, pause)
	}
	return run, nil
}

// pendingItem is the item of the run's one pending approval.
func pendingItem(ctx context.Context, c *client.Client, runID string) (string, error) {
	for ap, err := range c.Approvals(ctx, client.ApprovalQuery{RunID: runID, Status: client.ApprovalPending}) {
		if err != nil {
			return "", err
		}
		return ap.ItemID, nil
	}
	return "", fmt.Errorf("run %s has no pending approval", runID)
}

// outcome is a command's answer as the checks compare it: outcome and code.
type outcome struct{ Outcome, Code string }

func (o outcome) String() string {
	if o.Code == "" {
		return o.Outcome
	}
	return o.Outcome + " " + o.Code
}

// answered is the outcome of a command answer; a rejection is an outcome
// too, not an error.
func answered(res client.CommandResult, err error) (outcome, error) {
	var rej *client.RejectedError
	if err != nil && !errors.As(err, &rej) {
		return outcome{}, err
	}
	return outcome{res.Outcome, res.Code}, nil
}
