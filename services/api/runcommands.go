package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/xbot-runtime/xbot/commands"
)

type cancelRunBody struct {
	Reason string `json:"reason,omitempty" maxLength:"1024" doc:"Why the run is cancelled."`
}

type cancelRunInput struct {
	RunID string `path:"runId" maxLength:"160" pattern:"^[A-Za-z0-9._:-]{1,160}$" doc:"The run's id (run_…)."`
	CommandParams
	Body *cancelRunBody `required:"false"`
}

type appendUserInputBody struct {
	Intent        string `json:"intent" enum:"steer,follow_up,clarification" doc:"steer: inject into a running run at its next model request; clarification: answer the run's open question; follow_up: start a new run in the same session after a terminal one."`
	Content       string `json:"content" minLength:"1" maxLength:"262144" doc:"The user's message (at most 256 KiB of UTF-8)."`
	InteractionID string `json:"interactionId,omitempty" maxLength:"160" doc:"The clarification request being answered."`
}

type appendUserInputInput struct {
	RunID string `path:"runId" maxLength:"160" pattern:"^[A-Za-z0-9._:-]{1,160}$" doc:"The run's id (run_…)."`
	CommandParams
	Body appendUserInputBody
}

// runCommandErrors are the statuses runCommand answers itself: another
// owner's run (403), no such run (404), the command not queued (503).
var runCommandErrors = []int{http.StatusForbidden, http.StatusNotFound, http.StatusServiceUnavailable}

func (a *API) registerCancelRun() {
	register(a, huma.Operation{
		OperationID: "cancelRun", Method: http.MethodPost, Path: "/v1/runs/{runId}/cancel",
		Summary:     "Cancel a run",
		Description: "Queues a CancelRun command; the run is cancelled at its next safe point. On a terminal run the outcome is no_effect.",
		Tags:        []string{"Runs"}, DefaultStatus: http.StatusAccepted, Errors: runCommandErrors,
	}, func(ctx context.Context, in *cancelRunInput) (*commandOutput, error) {
		p := commands.CancelRunPayload{}
		if in.Body != nil {
			p.Reason = in.Body.Reason
		}
		return a.runCommand(ctx, commands.CancelRun, in.RunID, in.CommandParams, p)
	})
}

func (a *API) registerAppendUserInput() {
	register(a, huma.Operation{
		OperationID: "appendUserInput", Method: http.MethodPost, Path: "/v1/runs/{runId}/inputs",
		Summary:     "Add user input to a run",
		Description: "Queues an AppendUserInput command; its intent decides whether it steers, answers a clarification or follows up.",
		Tags:        []string{"Runs"}, DefaultStatus: http.StatusAccepted, Errors: runCommandErrors,
	}, func(ctx context.Context, in *appendUserInputInput) (*commandOutput, error) {
		p := commands.AppendUserInputPayload{Intent: in.Body.Intent, Content: in.Body.Content, InteractionID: in.Body.InteractionID}
		return a.runCommand(ctx, commands.AppendUserInput, in.RunID, in.CommandParams, p)
	})
}

// runCommand sends a command to an existing run of the caller's tenant.
func (a *API) runCommand(ctx context.Context, t commands.Type, runID string, p CommandParams, payload any) (*commandOutput, error) {
	noteRun(ctx, runID)
	wait, err := a.waitFor(p.Wait)
	if err != nil {
		return nil, err
	}
	d, err := newDraft(t, p.IdempotencyKey, "")
	if err != nil {
		return nil, err
	}
	run, err := a.findCreatedRun(ctx, runID)
	if err != nil {
		return nil, err
	}
	if err := checkRunOwner(principalOf(ctx), run); err != nil {
		return nil, err
	}
	d.runID, d.sessionID, d.payload = run.RunID, run.PlatformSessionID, payload
	env, err := d.envelope(ctx, p.ActorID)
	if err != nil {
		return nil, err
	}
	return a.dispatch(ctx, env, wait)
}

// findRun returns the run if it exists for the caller's tenant.
func (a *API) findRun(ctx context.Context, runID string) (RunRecord, error) {
	tenant := tenantOf(ctx)
	run, err := a.store.GetRun(ctx, tenant, runID)
	switch {
	case errors.Is(err, ErrNotFound):
		return run, fmt.Errorf("run %s: %w", runID, errRunNotFound)
	case err != nil:
		return run, fmt.Errorf("get run %s: %w", runID, err)
	case run.TenantID != tenant:
		return run, fmt.Errorf("run %s belongs to another tenant: %w", runID, errRunNotFound)
	}
	return run, nil
}

// checkRunOwner refuses a command on a run of another sandbox owner unless
// the principal may act for others: a follow-up would otherwise join the
// owner's session and inherit its grants, and a decision or cancel would act
// on someone else's run.
func checkRunOwner(p Principal, run RunRecord) error {
	var key struct {
		OwnerID string `json:"ownerId"`
	}
	if err := json.Unmarshal(run.SandboxKey, &key); err != nil {
		return fmt.Errorf("run %s: sandbox key: %w", run.RunID, err)
	}
	if key.OwnerID != p.Actor && !p.canActAs() {
		return forbidden("the run belongs to another owner; acting for another owner needs scope act_as")
	}
	return nil
}
