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
	WorkspaceID string `json:"workspaceId,omitempty" maxLength:"160" pattern:"^[A-Za-z0-9._:-]{1,160}$" doc:"Default \"default\"."`
	OwnerID     string `json:"ownerId,omitempty" maxLength:"160" pattern:"^[A-Za-z0-9._:-]{1,160}$" doc:"Default: the token's actor. Another owner needs scope act_as (403 forbidden_scope otherwise)."`
}

type createRunBody struct {
	AgentID           string            `json:"agentId" minLength:"1" maxLength:"64" pattern:"^[A-Za-z0-9._-]{1,64}$" doc:"The agent profile to run."`
	Input             userInput         `json:"input"`
	PlatformSessionID string            `json:"platformSessionId,omitempty" maxLength:"160" pattern:"^[A-Za-z0-9._:-]{1,160}$" doc:"Session the run belongs to. Default: a new session. The first create in a session makes its actor the session's owner; joining a session another actor owns needs scope act_as (403 forbidden_scope otherwise)."`
	SandboxKey        *sandboxKeyBody   `json:"sandboxKey,omitempty" doc:"Routes the run to its compute environment; tenantId and agentId come from the token and agentId."`
	ParentRunID       string            `json:"parentRunId,omitempty" maxLength:"160" pattern:"^[A-Za-z0-9._:-]{1,160}$" doc:"The run that spawned this one."`
	Metadata          map[string]string `json:"metadata,omitempty" maxProperties:"32" doc:"Free-form labels (keys 1-64 characters of [A-Za-z0-9._-], values at most 1 KiB)."`
	IdempotencyKey    string            `json:"idempotencyKey,omitempty" maxLength:"160" doc:"Alternative to the Idempotency-Key header."`
	Options           *runOptionsBody   `json:"options,omitempty" doc:"Per-run options (seed 002's agentRun), each bounded by the agent profile (403 option_not_allowed) and the token's scopes (403 forbidden_scope); absent fields take the profile's defaults. The effective options are frozen into the run's capability snapshot and shown in the stream's start metadata."`
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
			"run one at a time, in the order they were accepted; a run paused for a person yields the key and, once " +
			"resumed, waits its turn again (see queuePosition of GET /v1/runs/{runId}). " +
			"A run created in an existing platformSessionId inherits the session's platform_session permission " +
			"grants, which are frozen into its capability snapshot when it starts. " +
			"A retry of a create whose run ended longer ago than half of the window in which finished runs are " +
			"remembered (executor_remember_finished) is not sent again: it is answered duplicate from the read " +
			"models, or 409 idempotency_key_expired when they do not hold the original create.",
		Tags:          []string{"Runs"},
		DefaultStatus: http.StatusAccepted,
		Errors:        []int{http.StatusForbidden, http.StatusConflict, http.StatusServiceUnavailable},
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
	principal := principalOf(ctx)
	p := createPayload(principal, in)
	if p.SandboxKey.OwnerID != principal.Actor && !principal.canActAs() {
		return nil, forbidden("sandboxKey.ownerId names another owner; acting for another owner needs scope act_as")
	}
	if p.Options, err = a.runOptions(ctx, p.AgentID, in.Body.Options); err != nil {
		return nil, err
	}
	d.runID = commands.RunIDFor(principal.Tenant, d.key, p.SandboxKey, a.partitions(ctx))
	if d.sessionID, err = a.joinSession(ctx, in.Body.PlatformSessionID); err != nil {
		return nil, err
	}
	d.payload = p
	env, err := d.envelope(ctx, in.ActorID)
	if err != nil {
		return nil, err
	}
	if err := a.checkParent(ctx, in.Body.ParentRunID); err != nil {
		return nil, err
	}
	if err := a.claimKey(ctx, env); err != nil {
		return nil, err
	}
	if out, err := a.answerLongEnded(ctx, env); out != nil || err != nil {
		return out, err
	}
	env, hold, err := a.inheritGrants(ctx, in.Body.PlatformSessionID, env, p)
	if err != nil {
		return nil, err
	}
	defer a.release(ctx, hold, false)
	return a.dispatchHeld(ctx, env, wait, hold)
}

// claimKey records, tenant-wide, which request the create's idempotency key
// stands for, and refuses another request under a used key. The executor
// refuses it too, but only among the commands of one run: a create with
// another sandbox key has another run id, on another partition, and would
// otherwise become a second run under the same key.
func (a *API) claimKey(ctx context.Context, env commands.Envelope) error {
	fp := commands.Fingerprint(env)
	standing, _, err := a.store.ClaimIdempotencyKey(ctx, env.TenantID, env.IdempotencyKey, fp, env.RunID)
	if err != nil {
		a.log.Warn("claiming an idempotency key failed", zap.String("tenant_id", env.TenantID), zap.Error(err))
		return newProblem(http.StatusServiceUnavailable, events.CodeUnavailable,
			"the idempotency key cannot be checked right now; retry with the same Idempotency-Key")
	}
	if !commands.SameRequest(standing, env) {
		return newProblem(http.StatusUnprocessableEntity, events.CodeIdempotencyKeyReused,
			"the Idempotency-Key was already used for another request; nothing changed (send the new request with a new key)")
	}
	return nil
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

// joinSession claims the platform session for the principal (a new one when
// sessionID is empty) and returns its id. The first principal to claim a
// session owns it; the store's unique key decides between two first
// creates. Joining a session another actor owns needs scope act_as.
func (a *API) joinSession(ctx context.Context, sessionID string) (string, error) {
	p := principalOf(ctx)
	if sessionID == "" {
		sessionID = events.NewID("sess")
	}
	owner, err := a.store.ClaimSession(ctx, p.Tenant, sessionID, p.Actor)
	if err != nil {
		a.log.Warn("claiming a platform session failed", zap.String("tenant_id", p.Tenant), zap.Error(err))
		return "", newProblem(http.StatusServiceUnavailable, events.CodeUnavailable,
			"the session's owner cannot be read right now; retry with the same Idempotency-Key")
	}
	if owner != p.Actor && !p.canActAs() {
		return "", forbidden("platformSessionId names a session another actor owns; joining it needs scope act_as")
	}
	return sessionID, nil
}

// createPayload builds the payload; the sandbox owner defaults to the
// principal's actor.
func createPayload(principal Principal, in *createRunInput) commands.CreateRunPayload {
	b := in.Body
	key := events.SandboxKey{TenantID: principal.Tenant, WorkspaceID: "default", AgentID: b.AgentID, OwnerID: principal.Actor}
	if b.SandboxKey != nil && b.SandboxKey.WorkspaceID != "" {
		key.WorkspaceID = b.SandboxKey.WorkspaceID
	}
	if b.SandboxKey != nil && b.SandboxKey.OwnerID != "" {
		key.OwnerID = b.SandboxKey.OwnerID
	}
	return commands.CreateRunPayload{AgentID: b.AgentID, Input: events.UserInput{Content: b.Input.Content},
		SandboxKey: key, ParentRunID: b.ParentRunID, Metadata: b.Metadata}
}
