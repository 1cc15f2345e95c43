package api

import (
	"context"
	"errors"
	"time"

	"github.com/xbot-runtime/xbot/projections/uistream"
)

// streamAppearWait bounds how long a stream waits for a run or session the
// read model does not hold: the API answers a create before the read model
// has its run (at once with ?wait=0), and a client opening the stream next
// must not be told it does not exist. The event log shows the run within
// milliseconds; 2 s leaves room for a busy executor and is still a prompt
// 404 for a mistaken id. Every 404 waits it out, so that another tenant's
// run looks exactly like a missing one.
const streamAppearWait = 2 * time.Second

// awaitRun returns nil once run runID of the caller's tenant exists: in the
// read model, or on the log as the hub sees it; errRunNotFound after
// streamAppearWait.
func (a *API) awaitRun(ctx context.Context, hub *uistream.Hub, runID string) error {
	_, err := a.findRun(ctx, runID)
	if !errors.Is(err, errRunNotFound) {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, streamAppearWait)
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
// streamAppearWait.
func (a *API) awaitSession(ctx context.Context, deps streamDeps, sessionID string) error {
	tenant := tenantOf(ctx)
	head := func() error {
		_, err := deps.store.StreamSessionHead(ctx, tenant, sessionID)
		return err
	}
	if err := head(); !errors.Is(err, ErrNotFound) {
		return wrapErr(err)
	}
	wctx, cancel := context.WithTimeout(ctx, streamAppearWait)
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
