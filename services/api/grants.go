package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
)

// GrantReader reads the platform_session grants of the permission grants
// read model. SessionGrantsInForce returns those neither revoked nor
// expired, oldest first; SessionGrant returns one, revoked or expired as it
// may be, with ok false when the tenant's session has no such grant.
type GrantReader interface {
	SessionGrantsInForce(ctx context.Context, tenantID, sessionID string) ([]GrantRecord, error)
	SessionGrant(ctx context.Context, tenantID, sessionID, grantID string) (g GrantRecord, ok bool, err error)
}

// GrantRecord is a row of the permission grants read model.
type GrantRecord struct {
	GrantID, Scope, ToolName, RuleID string
	// RunID and ItemID are where the grant was given; Actor gave it.
	RunID, ItemID string
	Actor         events.Actor
	GrantedAt     time.Time
	ExpiresAt     *time.Time // nil: no TTL
	RevokedAt     *time.Time // nil: not revoked
}

// sessionGrant is a grant as the API shows it.
type sessionGrant struct {
	GrantID   string       `json:"grantId"`
	ToolName  string       `json:"toolName"`
	RuleID    string       `json:"ruleId" doc:"The policy rule the grant covers; empty when the policy's default asked."`
	Scope     string       `json:"scope" enum:"platform_session"`
	RunID     string       `json:"runId" doc:"The run in which the grant was given."`
	ItemID    string       `json:"itemId,omitempty" doc:"The item whose approval gave the grant."`
	GrantedBy events.Actor `json:"grantedBy" doc:"Who approved."`
	GrantedAt int64        `json:"grantedAt" doc:"Unix milliseconds: when the grant was given (the event's time)."`
	ExpiresAt int64        `json:"expiresAt,omitempty" doc:"Unix milliseconds: when a grant given with ttlSeconds lapses; absent: until revoked."`
}

func grantView(g GrantRecord) sessionGrant {
	v := sessionGrant{GrantID: g.GrantID, ToolName: g.ToolName, RuleID: g.RuleID, Scope: g.Scope, RunID: g.RunID,
		ItemID: g.ItemID, GrantedBy: g.Actor, GrantedAt: g.GrantedAt.UnixMilli()}
	if g.ExpiresAt != nil {
		v.ExpiresAt = g.ExpiresAt.UnixMilli()
	}
	return v
}

type listGrantsInput struct {
	PlatformSessionID string `path:"platformSessionId" maxLength:"160" pattern:"^[A-Za-z0-9._:-]{1,160}$" doc:"The platform session's id."`
}

// sessionGrantList is a session's grants in force.
type sessionGrantList struct {
	Grants []sessionGrant `json:"grants" nullable:"false"`
}

type listGrantsOutput struct {
	Body sessionGrantList
}

type revokeGrantBody struct {
	Reason string `json:"reason,omitempty" maxLength:"1024" doc:"Why the grant is revoked; recorded in the log."`
}

type revokeGrantInput struct {
	PlatformSessionID string `path:"platformSessionId" maxLength:"160" pattern:"^[A-Za-z0-9._:-]{1,160}$" doc:"The platform session's id."`
	GrantID           string `path:"grantId" maxLength:"160" pattern:"^grt_[A-Za-z0-9._:-]{1,156}$" doc:"The grant's id (grt_…)."`
	CommandParams
	Body *revokeGrantBody `required:"false"`
}

// grantRevocation is the answer of a revoke: one command per run.
type grantRevocation struct {
	GrantID  string          `json:"grantId"`
	Commands []commandResult `json:"commands" nullable:"false" doc:"One RevokePermissionGrant per run of the session: applied where the run held the grant, no_effect elsewhere, rejected run_not_found for a run whose create never reached the runtime."`
}

type revokeGrantOutput struct {
	Body grantRevocation
}

func (a *API) registerGrants() {
	register(a, huma.Operation{
		OperationID: "listSessionGrants", Method: http.MethodGet, Path: "/v1/sessions/{platformSessionId}/grants",
		Summary: "List a session's grants in force",
		Description: "The platform_session grants given in the session's runs that are neither revoked nor expired: " +
			"the grants a new run of the session inherits. 404 when the tenant has no run in this session.",
		Tags: []string{"Runs"}, Errors: []int{http.StatusNotFound, http.StatusServiceUnavailable},
	}, a.listSessionGrants)
	register(a, huma.Operation{
		OperationID: "revokeSessionGrant", Method: http.MethodDelete,
		Path:    "/v1/sessions/{platformSessionId}/grants/{grantId}",
		Summary: "Revoke a session grant",
		Description: "Sends a RevokePermissionGrant command to every run of the session: those the read model " +
			"shows, and those created in the session whose creates were sent before the revoke (a create waits " +
			"for a revoke of the session's grant, and a revoke for the creates already reading the grants). Each run " +
			"that holds the grant records runtime.permission_grant.revoked and passes the revoke on to the " +
			"follow-ups it created: a run in flight asks again at its next call of the tool " +
			"(its runtime.item.awaiting_approval says askReason grant_revoked). From the answer on, the session " +
			"no longer lists the grant and no new run of it inherits it. " +
			"Revoking needs to be the owner of the run that gave the grant, or scope act_as. " +
			"404 for a grant the tenant's session does not have.",
		Tags: []string{"Runs"}, DefaultStatus: http.StatusAccepted,
		Errors: []int{http.StatusForbidden, http.StatusNotFound, http.StatusServiceUnavailable},
	}, a.revokeSessionGrant)
}

// findSession answers 404 for a session the tenant has no run in.
func (a *API) findSession(ctx context.Context, sessionID string) error {
	tenant := tenantOf(ctx)
	s, err := a.store.GetSession(ctx, tenant, sessionID)
	switch {
	case errors.Is(err, ErrNotFound) || (err == nil && s.TenantID != tenant):
		return newProblem(http.StatusNotFound, events.CodeNotFound, "session not found")
	case err != nil:
		return fmt.Errorf("get session %s: %w", sessionID, err)
	}
	return nil
}

func (a *API) listSessionGrants(ctx context.Context, in *listGrantsInput) (*listGrantsOutput, error) {
	if err := a.findSession(ctx, in.PlatformSessionID); err != nil {
		return nil, err
	}
	rows, err := a.store.SessionGrantsInForce(ctx, tenantOf(ctx), in.PlatformSessionID)
	if err != nil {
		return nil, fmt.Errorf("grants of session %s: %w", in.PlatformSessionID, err)
	}
	out := &listGrantsOutput{}
	out.Body.Grants = make([]sessionGrant, 0, len(rows))
	for _, g := range rows {
		out.Body.Grants = append(out.Body.Grants, grantView(g))
	}
	return out, nil
}

func (a *API) revokeSessionGrant(ctx context.Context, in *revokeGrantInput) (*revokeGrantOutput, error) {
	wait, err := a.waitFor(in.Wait)
	if err != nil {
		return nil, err
	}
	if err := a.findSession(ctx, in.PlatformSessionID); err != nil {
		return nil, err
	}
	g, ok, err := a.store.SessionGrant(ctx, tenantOf(ctx), in.PlatformSessionID, in.GrantID)
	switch {
	case err != nil:
		return nil, fmt.Errorf("grant %s of session %s: %w", in.GrantID, in.PlatformSessionID, err)
	case !ok:
		return nil, newProblem(http.StatusNotFound, events.CodeNotFound, "grant not found")
	}
	if err := a.checkGrantOwner(ctx, g); err != nil {
		return nil, err
	}
	runs, err := a.revocationTargets(ctx, in.PlatformSessionID, in.GrantID)
	if err != nil {
		return nil, err
	}
	out := &revokeGrantOutput{}
	out.Body.GrantID, out.Body.Commands = in.GrantID, make([]commandResult, 0, len(runs))
	for _, runID := range runs {
		res, err := a.revokeIn(ctx, in, runID, runID == g.RunID, wait)
		if err != nil {
			return nil, err
		}
		out.Body.Commands = append(out.Body.Commands, res)
	}
	return out, nil
}

// revokeIn sends the revoke to run runID and waits up to wait for its
// outcome; for the run that gave the grant (granting), also for the read
// model to record it.
func (a *API) revokeIn(ctx context.Context, in *revokeGrantInput, runID string, granting bool, wait time.Duration) (commandResult, error) {
	p := commands.RevokePermissionGrantPayload{GrantID: in.GrantID}
	if in.Body != nil {
		p.Reason = in.Body.Reason
	}
	d, err := newDraft(commands.RevokePermissionGrant, in.IdempotencyKey, "")
	if err != nil {
		return commandResult{}, err
	}
	d.runID, d.sessionID, d.payload = runID, in.PlatformSessionID, p
	env, err := d.envelope(ctx, in.ActorID)
	if err != nil {
		return commandResult{}, err
	}
	res, err := a.dispatch(ctx, env, wait)
	if err != nil {
		return commandResult{}, err
	}
	if granting && res.Body.Outcome != outcomePending {
		a.awaitReadModel(ctx, env, wait)
	}
	return res.Body, nil
}

// awaitReadModel waits, up to wait, for the read model to record the
// outcome of env, the revoke sent to the run that gave the grant. The
// projector applies a partition's events in order and the revocation comes
// before its outcome, so from then on the grant's row is marked revoked and
// no new run of the session is handed it. A wait that runs out changes
// nothing but that promise: the revoke is in the log either way.
func (a *API) awaitReadModel(ctx context.Context, env commands.Envelope, wait time.Duration) {
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	if _, err := a.store.WaitCommand(wctx, env.TenantID, env.CommandID); err != nil && ctx.Err() == nil {
		a.log.Debug("the revoke's outcome is not in the read model yet", zap.String("command_id", env.CommandID),
			zap.String("run_id", env.RunID), zap.String("tenant_id", env.TenantID), zap.Error(err))
	}
}

// checkGrantOwner refuses a revoke by anyone but the owner of the run that
// gave the grant, unless the principal may act for others.
func (a *API) checkGrantOwner(ctx context.Context, g GrantRecord) error {
	run, err := a.findRun(ctx, g.RunID)
	if err != nil {
		return err
	}
	return checkRunOwner(principalOf(ctx), run)
}

// revocationTargets marks the grant as asked to be revoked, so that no
// create reads it any more, and returns the runs of the session to send the
// revoke to: those the read model holds, and those the API claimed for
// creates it sent that the read model may not have yet (ReadModels.
// RevokeSessionGrant). A run a follow-up created on the executor's side is
// reached from its parent (commands.RevokePermissionGrantPayload).
func (a *API) revocationTargets(ctx context.Context, sessionID, grantID string) ([]string, error) {
	claimed, err := a.store.RevokeSessionGrant(ctx, tenantOf(ctx), sessionID, grantID)
	if err != nil {
		a.log.Warn("marking a grant revoked failed", zap.String("tenant_id", tenantOf(ctx)), zap.Error(err))
		return nil, newProblem(http.StatusServiceUnavailable, events.CodeUnavailable,
			"the grant cannot be revoked right now; retry with the same Idempotency-Key")
	}
	runs, err := a.sessionRunIDs(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	listed := make(map[string]bool, len(runs))
	for _, id := range runs {
		listed[id] = true
	}
	for _, id := range claimed {
		if !listed[id] {
			runs = append(runs, id)
		}
	}
	return runs, nil
}

// sessionRunPage is the page size of the runs a revoke is sent to.
const sessionRunPage = 500

// sessionRunIDs lists every run of the session the read model holds.
func (a *API) sessionRunIDs(ctx context.Context, sessionID string) ([]string, error) {
	var ids []string
	for after := ""; ; {
		rows, next, err := a.store.ListRuns(ctx, RunFilter{TenantID: tenantOf(ctx), PlatformSessionID: sessionID,
			After: after, Limit: sessionRunPage})
		if err != nil {
			return nil, fmt.Errorf("list runs of session %s: %w", sessionID, err)
		}
		for _, r := range rows {
			ids = append(ids, r.RunID)
		}
		if next == "" {
			return ids, nil
		}
		after = next
	}
}
