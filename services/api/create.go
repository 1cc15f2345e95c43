package api

import (
	"context"
	"errors"
	"net/http"

	"github.com/danielgtaylor/huma/v2"
	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
)

type userInput struct {
	Content string `json:"content" minLength:"1" maxLength:"262144" doc:"The user's message (at most 256 KiB of UTF-8)."`
}

type sandboxKeyBody struct {
	WorkspaceID string `json:"workspaceId,omitempty" maxLength:"160" doc:"Default \"default\"."`
	OwnerID     string `json:"ownerId,omitempty" maxLength:"160" doc:"Default: the actor id."`
}

type createRunBody struct {
	AgentID           string            `json:"agentId" minLength:"1" maxLength:"64" pattern:"^[A-Za-z0-9._-]{1,64}$" doc:"The agent profile to run."`
	Input             userInput         `json:"input"`
	PlatformSessionID string            `json:"platformSessionId,omitempty" maxLength:"160" doc:"Session the run belongs to. Default: a new session."`
	SandboxKey        *sandboxKeyBody   `json:"sandboxKey,omitempty" doc:"Routes the run to its compute environment; tenantId and agentId come from the token and agentId."`
	ParentRunID       string            `json:"parentRunId,omitempty" doc:"The run that spawned this one."`
	Metadata          map[string]string `json:"metadata,omitempty" maxProperties:"32" doc:"Free-form labels (keys 1-64 characters of [A-Za-z0-9._-], values at most 1 KiB)."`
	IdempotencyKey    string            `json:"idempotencyKey,omitempty" maxLength:"160" doc:"Alternative to the Idempotency-Key header."`
}

type createRunInput struct {
	CommandParams
	Body createRunBody
}

func (a *API) registerCreateRun() {
	register(a, huma.Operation{
		OperationID: "createRun",
		Method:      http.MethodPost,
		Path:        "/v1/runs",
		Summary:     "Create a run",
		Description: "Queues a CreateRun command. The runId is derived from the tenant, the idempotency key and the " +
			"sandbox key, so a retried create lands on the same run, and it is placed on the sandbox key's partition " +
			"of the commands topic (commands.RunIDFor): all runs of one sandbox key live on one partition, where they " +
			"run one at a time, in the order they were accepted (see queuePosition of GET /v1/runs/{runId}). " +
			"A run created in an existing platformSessionId inherits the session's platform_session permission " +
			"grants, which are frozen into its capability snapshot when it starts.",
		Tags:          []string{"Runs"},
		DefaultStatus: http.StatusAccepted,
		Errors:        []int{http.StatusUnauthorized, http.StatusRequestEntityTooLarge, http.StatusUnprocessableEntity, http.StatusServiceUnavailable},
	}, a.createRun)
}

func (a *API) createRun(ctx context.Context, in *createRunInput) (*commandOutput, error) {
	wait, err := a.waitFor(in.Wait)
	if err != nil {
		return nil, err
	}
	d, err := newDraft(commands.CreateRun, in.IdempotencyKey, in.Body.IdempotencyKey)
	if err != nil {
		return nil, err
	}
	tenant := tenantOf(ctx)
	p := createPayload(tenant, in)
	d.runID = commands.RunIDFor(tenant, d.key, p.SandboxKey, a.partitions(ctx))
	d.sessionID = in.Body.PlatformSessionID
	if d.sessionID == "" {
		d.sessionID = events.NewID("sess")
	} else if p.SessionGrants, err = a.store.SessionGrants(ctx, tenant, d.sessionID); err != nil {
		// Creating the run without them would silently ask again what the
		// session already allowed; the client retries with the same key.
		a.log.Warn("reading a session's permission grants failed", zap.String("tenant_id", tenant), zap.Error(err))
		return nil, newProblem(http.StatusServiceUnavailable, commands.CodeUnavailable,
			"the session's permission grants cannot be read right now; retry with the same Idempotency-Key")
	}
	d.payload = p
	env, err := d.envelope(ctx, in.ActorID)
	if err != nil {
		return nil, err
	}
	if err := a.checkParent(ctx, in.Body.ParentRunID); err != nil {
		return nil, err
	}
	return a.dispatch(ctx, env, wait)
}

// checkParent refuses a parentRunId that is not a run of the caller's
// tenant: the executor loads the parent chain's conversation into the new
// run's model requests, so another tenant's run would leak its content.
// A parent created moments ago may not be in the read model yet; the client
// retries with the same Idempotency-Key.
func (a *API) checkParent(ctx context.Context, parentRunID string) error {
	if parentRunID == "" {
		return nil
	}
	_, err := a.findRun(ctx, parentRunID)
	if errors.Is(err, errRunNotFound) {
		return invalid("body.parentRunId", "is not a run of this tenant", nil)
	}
	return err
}

func createPayload(tenant string, in *createRunInput) commands.CreateRunPayload {
	b := in.Body
	key := events.SandboxKey{TenantID: tenant, WorkspaceID: "default", AgentID: b.AgentID, OwnerID: in.ActorID}
	if key.OwnerID == "" {
		key.OwnerID = tenant
	}
	if b.SandboxKey != nil && b.SandboxKey.WorkspaceID != "" {
		key.WorkspaceID = b.SandboxKey.WorkspaceID
	}
	if b.SandboxKey != nil && b.SandboxKey.OwnerID != "" {
		key.OwnerID = b.SandboxKey.OwnerID
	}
	return commands.CreateRunPayload{AgentID: b.AgentID, Input: events.UserInput{Content: b.Input.Content},
		SandboxKey: key, ParentRunID: b.ParentRunID, Metadata: b.Metadata}
}
