package executor

import (
	"errors"

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
	frozen, err := snap.Freeze()
	if err != nil {
		return nil, err
	}
	// Nothing waits for the start's commit: the engine's first side effect
	// (a tool call's start) or answer (a pause, the run's end) commits it.
	if _, err := r.Append(w.ctx, AppendOptions{NoWait: true}, events.Draft{Type: events.CapabilitySnapshotFrozen, Payload: frozen}, started); err != nil {
		return nil, err
	}
	return &snap.Profile, nil
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
