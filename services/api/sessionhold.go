package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
)

// SessionHold is a create's shared lock on a platform session
// (ReadModels.HoldSession). Release ends it, keeping the run's claim when
// sent; a hold released twice is released once.
type SessionHold interface {
	Release(ctx context.Context, sent bool) error
}

// inheritGrants puts into create env (payload p) the grants its run
// inherits from the existing platform session sessionID, read under the
// session's hold (ReadModels.HoldSession), so that a revoke of one of them
// is either read here or reaches the run. A new session (sessionID empty)
// has no grants and needs no hold. The caller sends env under the hold
// (dispatchHeld), and releases it with sent false if it does not.
//
// Nothing else reads the database while a hold is taken: a hold keeps a
// connection of the pool until the send, and a second one taken under it
// could wait for a pool that holds fill.
func (a *API) inheritGrants(ctx context.Context, sessionID string, env commands.Envelope, p commands.CreateRunPayload) (commands.Envelope, SessionHold, error) {
	if sessionID == "" {
		return env, nil, nil
	}
	tenant := tenantOf(ctx)
	hold, grants, err := a.store.HoldSession(ctx, tenant, sessionID, env.RunID)
	if err != nil {
		// Creating the run without them would silently ask again what the
		// session already allowed; the client retries with the same key.
		a.log.Warn("reading a session's permission grants failed", zap.String("tenant_id", tenant), zap.Error(err))
		return env, nil, newProblem(http.StatusServiceUnavailable, events.CodeUnavailable,
			"the session's permission grants cannot be read right now; retry with the same Idempotency-Key")
	}
	p.SessionGrants = grants
	if env.Payload, err = json.Marshal(p); err == nil {
		_, err = env.Validate()
	}
	if err != nil {
		a.release(ctx, hold, false)
		return env, nil, fmt.Errorf("create %s with the session's grants: %w", env.CommandID, err)
	}
	return env, hold, nil
}

// release ends a session hold (nil: none); sent says the CreateRun was sent,
// or its send may have written it.
func (a *API) release(ctx context.Context, hold SessionHold, sent bool) {
	if hold == nil {
		return
	}
	if err := hold.Release(ctx, sent); err != nil {
		a.log.Warn("releasing a session hold failed", zap.String("tenant_id", tenantOf(ctx)), zap.Error(err))
	}
}
