package contracttests

import (
	"context"

	"github.com/xbot-runtime/xbot/services/api/client"
)

// The runs of the states, each in a workspace (sandbox) of its own, so that
// only the queued row's runs wait for one another.

func buildQueued(ctx context.Context, r *runs) (stateRun, error) {
	ws := r.name("queued")
	blocker, err := r.create(ctx, AgentSlow, ws, "", "block the sandbox")
	if err != nil {
		return stateRun{}, err
	}
	if _, err := await(ctx, r.c, blocker, "running", ""); err != nil {
		return stateRun{}, err
	}
	id, err := r.create(ctx, AgentSlow, ws, "", "wait for the sandbox")
	if err != nil {
		return stateRun{}, err
	}
	_, err = await(ctx, r.c, id, "queued", "")
	return stateRun{id: id}, err
}

func buildRunning(ctx context.Context, r *runs) (stateRun, error) {
	return buildIn(ctx, r, AgentSlow, "running", "")
}

func buildApprovalPause(ctx context.Context, r *runs) (stateRun, error) {
	run, err := buildIn(ctx, r, AgentApproval, "paused", "awaiting_approval")
	if err != nil {
		return run, err
	}
	run.item, err = pendingItem(ctx, r.c, run.id)
	return run, err
}

func buildQuestionPause(ctx context.Context, r *runs) (stateRun, error) {
	return buildIn(ctx, r, AgentQuestion, "paused", "awaiting_user_input")
}

func buildEnded(agent, status string) func(ctx context.Context, r *runs) (stateRun, error) {
	return func(ctx context.Context, r *runs) (stateRun, error) { return buildIn(ctx, r, agent, status, "") }
}

func buildCancelled(ctx context.Context, r *runs) (stateRun, error) {
	run, err := buildRunning(ctx, r)
	if err != nil {
		return run, err
	}
	if _, err := r.c.CancelRun(ctx, run.id, "conformance", client.CommandOptions{}); err != nil {
		return run, err
	}
	_, err = await(ctx, r.c, run.id, "cancelled", "")
	return run, err
}

// buildIn creates a run of agent in a workspace of its own and waits for
// status (and pause).
func buildIn(ctx context.Context, r *runs, agent, status, pause string) (stateRun, error) {
	id, err := r.create(ctx, agent, r.name("ws"), "", "conformance")
	if err != nil {
		return stateRun{id: id}, err
	}
	_, err = await(ctx, r.c, id, status, pause)
	return stateRun{id: id}, err
}
