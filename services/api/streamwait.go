package api

import (
	"context"
	"errors"
	"time"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/projections/uistream"
)

// awaitRun returns nil once run runID of the caller's tenant exists: in the
// read model, or on the log as the hub sees it; errRunNotFound after
// Config.StreamAppearWait. A run the hub already shows, or one this instance
// created moments ago, is not looked up in the read model first: a burst of
// clients streaming the runs they just created would otherwise queue on the
// read model's connections for a fact the tail is about to show.
func (a *API) awaitRun(ctx context.Context, hub *uistream.Hub, runID string) error {
	tenant := tenantOf(ctx)
	if hub.Knows(tenant, runID) {
		return nil
	}
	if _, mine := a.flights.createOf(tenant, runID); !mine {
		_, err := a.findRun(ctx, runID)
		if !errors.Is(err, errRunNotFound) {
			return err
		}
	}
	wctx, cancel := context.WithTimeout(ctx, a.cfg.StreamAppearWait)
	defer cancel()
	if hub.AwaitRun(wctx, tenant, runID) {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	// The tail may have started after the run's events: ask the read model
	// once more.
	_, err := a.findRun(ctx, runID)
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
		return a.findLoggedRun(ctx, runID, err)
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

// readModelPoll is how often findLoggedRun asks the read model again.
const readModelPoll = 5 * time.Millisecond

// tailCatchUp bounds how long a run read that finds nothing waits for this
// instance's tail to show the run, after the TailBarrier when there is one:
// another instance may have sent its create a moment ago. Every such 404
// waits as long, so another tenant's run looks exactly like a missing one.
const tailCatchUp = 250 * time.Millisecond

// findLoggedRun serves a client that created the run through another
// instance moments ago (behind a load balancer): when this instance's tail
// shows that the run exists for the caller's tenant, the read model is asked
// again, up to Config.StreamAppearWait, until it has it; notFound otherwise.
// With a TailBarrier a run committed before the read is shown whatever the
// tail's lag: the read first waits, up to Config.StreamAppearWait, until the
// hub holds every event committed before it.
func (a *API) findLoggedRun(ctx context.Context, runID string, notFound error) (RunRecord, error) {
	deps, err := a.streamDeps()
	if err != nil {
		return RunRecord{}, notFound
	}
	if !a.tailShows(ctx, deps, runID) {
		if ctx.Err() != nil {
			return RunRecord{}, ctx.Err()
		}
		// The run's events may have left the hub's window while the read
		// model caught up: ask it once more.
		if run, err := a.findRun(ctx, runID); !errors.Is(err, errRunNotFound) {
			return run, err
		}
		return RunRecord{}, notFound
	}
	deadline := time.NewTimer(a.cfg.StreamAppearWait)
	defer deadline.Stop()
	tick := time.NewTicker(readModelPoll)
	defer tick.Stop()
	for {
		run, err := a.findRun(ctx, runID)
		if !errors.Is(err, errRunNotFound) {
			return run, err
		}
		select {
		case <-ctx.Done():
			return RunRecord{}, ctx.Err()
		case <-deadline.C:
			return RunRecord{}, notFound
		case <-tick.C:
		}
	}
}

// tailShows reports whether this instance's tail shows run runID of the
// caller's tenant within tailCatchUp, after the barrier when there is one:
// a run whose create was committed before the read is then seen at once,
// whatever the tail's lag, and a create still being admitted (answered
// pending elsewhere) gets tailCatchUp to appear. A barrier that does not
// pass within Config.StreamAppearWait (the tail that far behind, or Kafka
// unreachable) shows nothing.
func (a *API) tailShows(ctx context.Context, deps streamDeps, runID string) bool {
	if deps.barrier != nil {
		bctx, cancel := context.WithTimeout(ctx, a.cfg.StreamAppearWait)
		err := deps.barrier.Barrier(bctx)
		cancel()
		if err != nil {
			a.log.Debug("run read: the tail's barrier did not pass", zap.String("run_id", runID), zap.Error(err))
			return false
		}
	}
	seen, cancel := context.WithTimeout(ctx, tailCatchUp)
	defer cancel()
	return deps.hub.AwaitRun(seen, tenantOf(ctx), runID)
}
