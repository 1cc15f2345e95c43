package api

import (
	"context"
	"errors"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/projections/uistream"
)

// awaitRun returns nil once run runID of the caller's tenant exists: in the
// read model, or on the log as the hub sees it; errRunNotFound after
// Config.StreamAppearWait.
func (a *API) awaitRun(ctx context.Context, hub *uistream.Hub, runID string) error {
	_, err := a.findRun(ctx, runID)
	if !errors.Is(err, errRunNotFound) {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, a.cfg.StreamAppearWait)
	defer cancel()
	if hub.AwaitRun(wctx, tenantOf(ctx), runID) {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	// The tail may have started after the run's events: ask the read model
	// once more.
	_, err = a.findRun(ctx, runID)
	return err
}

// awaitSession returns nil once the caller's tenant has a run in session
// sessionID, as awaitRun does for a run; a 404 problem after
// Config.StreamAppearWait.
func (a *API) awaitSession(ctx context.Context, deps streamDeps, sessionID string) error {
	tenant := tenantOf(ctx)
	head := func() error {
		_, err := deps.store.StreamSessionHead(ctx, tenant, sessionID)
		return err
	}
	if err := head(); !errors.Is(err, ErrNotFound) {
		return wrapErr(err)
	}
	wctx, cancel := context.WithTimeout(ctx, a.cfg.StreamAppearWait)
	defer cancel()
	// A run this instance created in the session moments ago is on the log
	// already; the hub retains its events. Else wait for the session's next.
	if runID, ok := a.flights.sessionRun(tenant, sessionID); ok && deps.hub.AwaitRun(wctx, tenant, runID) {
		return nil
	}
	if deps.hub.AwaitSession(wctx, tenant, sessionID) {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return wrapErr(head())
}

// wrapErr is wrapNotFound for a session, keeping nil nil.
func wrapErr(err error) error {
	if err == nil {
		return nil
	}
	return wrapNotFound(err, "session")
}

// findCreatedRun is findRun for a client that may read a run right after
// creating it: when the read model does not hold the run yet and this
// instance sent the tenant's create of it (not rejected), it waits, up to
// Config.StreamAppearWait, for the read model to record the create, which
// it does in the transaction that adds the run.
func (a *API) findCreatedRun(ctx context.Context, runID string) (RunRecord, error) {
	run, err := a.findRun(ctx, runID)
	if !errors.Is(err, errRunNotFound) {
		return run, err
	}
	f, ok := a.flights.createOf(tenantOf(ctx), runID)
	if !ok {
		return run, err
	}
	if rec, done := f.result(); done && rec.Outcome == string(events.OutcomeRejected) {
		return run, err
	}
	wctx, cancel := context.WithTimeout(ctx, a.cfg.StreamAppearWait)
	defer cancel()
	if _, werr := a.store.WaitCommand(wctx, f.env.TenantID, f.env.CommandID); werr != nil {
		if ctx.Err() != nil {
			return run, ctx.Err()
		}
		return run, err
	}
	return a.findRun(ctx, runID)
}
