package api

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
)

type interruptBody struct {
	CancelQueued bool `json:"cancelQueued" doc:"What becomes of the session's messages still queued on the interrupted run: dropped (true; their outcome says so) or the session's next run (false), one run whose input is their contents in order."`
}

type interruptInput struct {
	PlatformSessionID string `path:"platformSessionId" maxLength:"160" pattern:"^[A-Za-z0-9._:-]{1,160}$" doc:"The platform session's id."`
	CommandParams
	Body *interruptBody `required:"false"`
}

func (a *API) registerSessionInterrupt() {
	register(a, huma.Operation{
		OperationID: "interruptSession", Method: http.MethodPost, Path: "/v1/sessions/{platformSessionId}/interrupt",
		Summary: "Interrupt a session's current reply",
		Description: "Queues a CancelRun with interrupt set; the executor cancels the session's head run at its next " +
			"safe point (at once when it is queued or paused) and keeps the session: its next message starts the " +
			"next run. cancelQueued chooses what becomes of the messages still queued on that run. When no reply is " +
			"in progress the outcome is no_effect. 404 when the tenant has no run in this session.",
		Tags: []string{"Sessions"}, DefaultStatus: http.StatusAccepted, Errors: sessionCommandErrors,
	}, a.interruptSession)
}

func (a *API) interruptSession(ctx context.Context, in *interruptInput) (*sessionCommandOutput, error) {
	wait, err := a.waitFor(in.Wait)
	if err != nil {
		return nil, err
	}
	d, err := newDraft(commands.CancelRun, in.IdempotencyKey, "")
	if err != nil {
		return nil, err
	}
	run, ok, _, err := a.latestSessionRun(ctx, in.PlatformSessionID)
	switch {
	case err != nil:
		return nil, err
	case !ok:
		return nil, newProblem(http.StatusNotFound, events.CodeNotFound, "session not found")
	}
	d.runID = run
	if _, err := a.joinSession(ctx, in.PlatformSessionID); err != nil {
		return nil, err
	}
	p := commands.CancelRunPayload{Reason: "interrupted", Interrupt: true}
	if in.Body != nil {
		p.CancelQueued = in.Body.CancelQueued
	}
	d.sessionID, d.payload = in.PlatformSessionID, p
	return a.submitSessionCommand(ctx, d, in.ActorID, wait)
}
