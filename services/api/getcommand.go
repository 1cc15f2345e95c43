package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/danielgtaylor/huma/v2"
)

// command is a row of the commands read model: a command's latest outcome.
type command struct {
	CommandID         string `json:"commandId"`
	RunID             string `json:"runId"`
	TenantID          string `json:"tenantId"`
	Type              string `json:"type" doc:"CreateRun, AppendUserInput, CancelRun, SubmitApprovalDecision, RequestCompaction or RevokePermissionGrant."`
	IdempotencyKey    string `json:"idempotencyKey"`
	Outcome           string `json:"outcome" enum:"pending,accepted,rejected,duplicate,no_effect,applied" doc:"The latest outcome (an accepted command later becomes applied). pending: the command was sent and no outcome is recorded yet; poll again."`
	FirstOutcome      string `json:"firstOutcome" enum:"pending,accepted,rejected,duplicate,no_effect,applied" doc:"The outcome the command endpoints answer with (pending while the command is in flight)."`
	Code              string `json:"code,omitempty" doc:"Stable error code of a rejection."`
	Message           string `json:"message,omitempty"`
	OriginalCommandID string `json:"originalCommandId,omitempty" doc:"For a duplicate: the command that first used the idempotency key."`
	OriginalOutcome   string `json:"originalOutcome,omitempty" doc:"For a duplicate: the original command's outcome."`
	OriginalCode      string `json:"originalCode,omitempty" doc:"For a duplicate: the original command's error code, if any."`
	CreatedRunID      string `json:"createdRunId,omitempty" doc:"For an applied follow-up (or a duplicate of one): the run it started in the same platform session."`
	Seq               int64  `json:"seq" doc:"Seq of the latest outcome event in the run's log (0 while pending)."`
	UpdatedAt         int64  `json:"updatedAt" doc:"Unix milliseconds (while pending: when the command was sent)."`
}

func commandView(c CommandRecord) command {
	return command{CommandID: c.CommandID, RunID: c.RunID, TenantID: c.TenantID, Type: c.Type,
		IdempotencyKey: c.IdempotencyKey, Outcome: c.Outcome, FirstOutcome: c.FirstOutcome, Code: c.Code,
		Message: c.Message, OriginalCommandID: c.OriginalCommandID, OriginalOutcome: c.OriginalOutcome,
		OriginalCode: c.OriginalCode, CreatedRunID: c.CreatedRunID, Seq: c.Seq, UpdatedAt: c.UpdatedAt.UnixMilli()}
}

type getCommandInput struct {
	CommandID string `path:"commandId" maxLength:"160" pattern:"^[A-Za-z0-9._:-]{1,160}$" doc:"The command's id (cmd_…)."`
}

type getCommandOutput struct {
	Body command
}

func (a *API) registerGetCommand() {
	register(a, huma.Operation{
		OperationID: "getCommand", Method: http.MethodGet, Path: "/v1/commands/{commandId}",
		Summary: "Get a command's outcome",
		Description: "Poll this after a command endpoint answered pending. A command sent in the last 10 minutes, " +
			"through this API instance or another, is answered pending until its outcome is recorded (its outcome as " +
			"soon as the event log holds it, before the read model does); 404 for a command id the tenant did not send " +
			"and has no recorded outcome.",
		Tags: []string{"Commands"}, Errors: []int{http.StatusNotFound, http.StatusServiceUnavailable},
	}, a.getCommand)
}

func (a *API) getCommand(ctx context.Context, in *getCommandInput) (*getCommandOutput, error) {
	tenant := tenantOf(ctx)
	c, err := a.store.GetCommand(ctx, tenant, in.CommandID)
	switch {
	case errors.Is(err, ErrNotFound):
		return a.commandInFlight(ctx, tenant, in.CommandID)
	case err != nil:
		return nil, fmt.Errorf("get command %s: %w", in.CommandID, err)
	case c.TenantID != tenant:
		return nil, fmt.Errorf("command %s belongs to another tenant: %w", in.CommandID, errCommandNotFound)
	}
	noteRun(ctx, c.RunID)
	return &getCommandOutput{Body: commandView(c)}, nil
}

// commandInFlight answers a command the read model does not hold yet: its
// outcome when the log already shows it, pending while this instance
// remembers it sent for the tenant (by itself, or by another instance as
// the commands topic showed), else 404.
func (a *API) commandInFlight(ctx context.Context, tenant, commandID string) (*getCommandOutput, error) {
	f, ok := a.flights.get(tenant, commandID)
	if !ok {
		if f, ok = a.sentElsewhere(ctx, tenant, commandID); !ok {
			return nil, fmt.Errorf("command %s: %w", commandID, errCommandNotFound)
		}
	}
	noteRun(ctx, f.env.RunID)
	if rec, ok := f.result(); ok && complete(rec) {
		return &getCommandOutput{Body: commandView(rec)}, nil
	}
	return &getCommandOutput{Body: command{CommandID: commandID, RunID: f.env.RunID, TenantID: tenant,
		Type: string(f.env.Type), IdempotencyKey: f.env.IdempotencyKey, Outcome: outcomePending,
		FirstOutcome: outcomePending, UpdatedAt: f.sentAt.UnixMilli()}}, nil
}
