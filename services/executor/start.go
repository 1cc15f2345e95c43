package executor

import (
	"context"
	"errors"
	"fmt"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/engine/profile"
)

// start freezes the run's capability snapshot and starts it (queued →
// running) in one append: the run never runs without its snapshot. A run
// whose profile cannot be resolved starts and fails at once, so it does not
// hold its sandbox key forever. It returns nil when the run did not start.
func (w *partitionWorker) start(r *Run) (*profile.Profile, error) {
	st := r.State()
	started := events.Draft{Type: events.RunStarted, Payload: events.RunStartedPayload{ExecutorID: w.ex.cfg.ID}}
	snap, err := w.ex.snapshot(st)
	if err != nil {
		w.log.Error("run cannot start", zap.String("run_id", r.ID()), zap.Error(err))
		_, aerr := r.Append(w.ctx, AppendOptions{}, started, events.Draft{Type: events.RunFailed,
			Payload: events.RunFailedPayload{ErrorCode: events.FailInternal, Message: err.Error()}})
		return nil, aerr
	}
	drafts, err := w.startDrafts(snap)
	if err != nil {
		return nil, err
	}
	// Nothing waits for the start's commit: the engine's first side effect
	// (a tool call's start) or answer (a pause, the run's end) commits it.
	if _, err := r.Append(w.ctx, AppendOptions{NoWait: true}, drafts...); err != nil {
		return nil, err
	}
	return &snap.Profile, nil
}

// startDrafts are the events that start a run with snapshot snap.
func (w *partitionWorker) startDrafts(snap profile.Snapshot) ([]events.Draft, error) {
	frozen, err := snap.Freeze()
	if err != nil {
		return nil, err
	}
	return []events.Draft{{Type: events.CapabilitySnapshotFrozen, Payload: frozen},
		{Type: events.RunStarted, Payload: events.RunStartedPayload{ExecutorID: w.ex.cfg.ID}}}, nil
}

// startAtAdmission starts a run the batch just accepted, in the admission's
// transaction, when its sandbox key is free: no run holds it, none waits for
// it, and no earlier run of this batch asked for it, so the key's FIFO holds.
// It returns false when the run waits for its key, which it records
// (runtime.run.queued), or its snapshot cannot be made now: the scheduler
// starts it, as any queued run, after the commit.
func (b *batch) startAtAdmission(runID string) bool {
	st := b.state(runID)
	k := sandboxKey(*st)
	id := events.Identity{RunID: runID, TenantID: st.TenantID, PlatformSessionID: st.PlatformSessionID}
	if !b.keyFree(k) {
		if err := b.push(id, []events.Draft{b.queuedDraft(k, "")}); err != nil {
			b.w.log.Error("recording a queued run's place failed", zap.String("run_id", runID), zap.Error(err))
		}
		b.keyTaken[k] = true
		return false
	}
	b.keyTaken[k] = true
	if b.w.ex.startsItself(st.AgentID) {
		return false // its engine resolves its snapshot and starts it (Starter)
	}
	snap, err := b.w.ex.snapshot(*st)
	if err != nil {
		return false // the scheduler's start records why it cannot start
	}
	drafts, err := b.w.startDrafts(snap)
	if err == nil {
		err = b.push(id, drafts)
	}
	if err != nil {
		b.w.log.Error("starting an accepted run failed", zap.String("run_id", runID), zap.Error(err))
		return false
	}
	b.started = append(b.started, runID)
	b.profiles[runID] = snap.Profile
	return true
}

// startsItself reports whether the engine starts runs of agentID itself
// (Starter), as the agent's profile is configured now.
func (ex *Executor) startsItself(agentID string) bool {
	s, ok := ex.engine.(Starter)
	if !ok {
		return false
	}
	p, ok := ex.profiles.Load().Get(agentID)
	return ok && s.StartsRun(p)
}

// Start freezes the run's capability snapshot and starts the run, for an
// engine that starts runs itself (Starter): the profile, as configured now,
// is resolved as for any run, resolve completes the snapshot (the engine's
// I/O, in the engine's goroutine, within a context that ends when ctx does
// or the run ends meanwhile: a cancel while it waits), and the snapshot and
// runtime.run.started are appended together. When either step fails, the
// run starts and fails at once (capability_unavailable for resolve's error,
// whose text is the run's error message) and ok is false; a run that ended
// meanwhile returns ErrRunEnded. It returns the profile the run started
// with.
func (r *Run) Start(ctx context.Context, resolve func(context.Context, profile.Snapshot) (profile.Snapshot, error)) (p profile.Profile, ok bool, err error) {
	w := r.worker
	st := r.State()
	if st.Status != events.StatusQueued || st.Requeued {
		return profile.Profile{}, false, fmt.Errorf("start run %s: it is %s, not waiting to start", r.id, st.Status)
	}
	started := events.Draft{Type: events.RunStarted, Payload: events.RunStartedPayload{ExecutorID: w.ex.cfg.ID}}
	code := events.FailInternal
	snap, err := w.ex.snapshot(st)
	if err == nil {
		code = events.FailCapabilityUnavailable
		rctx, cancel := r.Step(ctx)
		snap, err = resolve(rctx, snap)
		cancel()
	}
	if err != nil {
		if ctx.Err() != nil {
			return profile.Profile{}, false, ctx.Err()
		}
		if r.State().Status.Terminal() {
			return profile.Profile{}, false, ErrRunEnded
		}
		w.log.Warn("run cannot start", zap.String("run_id", r.id), zap.Error(err))
		_, aerr := r.Append(ctx, AppendOptions{}, started, events.Draft{Type: events.RunFailed,
			Payload: events.RunFailedPayload{ErrorCode: code, Message: err.Error()}})
		return profile.Profile{}, false, aerr
	}
	drafts, err := w.startDrafts(snap)
	if err != nil {
		return profile.Profile{}, false, err
	}
	if _, err := r.Append(ctx, AppendOptions{NoWait: true}, drafts...); err != nil {
		return profile.Profile{}, false, err
	}
	return snap.Profile, true, nil
}

// frozenProfile is the profile of the run's capability snapshot; a run that
// started before snapshots existed uses the current profile.
func (w *partitionWorker) frozenProfile(r *Run) (profile.Profile, error) {
	snap, err := profile.SnapshotOf(r.Events())
	if err == nil {
		return snap.Profile, nil
	}
	if !errors.Is(err, profile.ErrNoSnapshot) {
		return profile.Profile{}, err
	}
	p, ok := w.ex.profiles.Load().Get(r.State().AgentID)
	if !ok {
		return profile.Profile{}, errors.New("agent profile " + r.State().AgentID + " is no longer configured")
	}
	return p, nil
}

// restore records that this executor took the run over and closes the items
// the previous owner left open: their outcome is unknown (runtime_lost).
func (w *partitionWorker) restore(r *Run) error {
	st := r.State()
	var ids []string
	for _, it := range st.OpenItems() {
		ids = append(ids, it.ID)
	}
	drafts := append([]events.Draft{{Type: events.RunCheckpointRestored, Payload: events.CheckpointRestoredPayload{
		LastSeq: st.LastSeq, ExecutorID: w.ex.cfg.ID, OpenItems: ids}}},
		events.FailOpenItems(st, events.FailRuntimeLost, "the executor running this item stopped")...)
	if _, err := r.Append(w.ctx, AppendOptions{}, drafts...); err != nil {
		return err
	}
	r.lost = false
	return nil
}

func (r *Run) setStartProfile(p profile.Profile) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.started = &p
}

// takeStartProfile returns, once, the profile the run was started with at
// admission.
func (r *Run) takeStartProfile() (profile.Profile, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.started
	r.started = nil
	if p == nil {
		return profile.Profile{}, false
	}
	return *p, true
}
