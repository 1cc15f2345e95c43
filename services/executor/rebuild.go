package executor

import (
	"context"
	"errors"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/services/profile"
)

// Assigned implements kafka.Handler: it folds the partition's committed
// events into run states, then resumes every run that was queued or running.
func (ex *Executor) Assigned(ctx context.Context, part *kafka.Partition, replay func(func(kafka.Record) error) error) error {
	a := newActor(ctx, ex, part)
	broken := map[string]bool{}
	states := map[string]events.RunState{}
	logs := map[string][]events.Envelope{}
	sizes := map[string]int64{} // encoded bytes of each run's events
	var order []string          // runs in the order they were accepted: each sandbox key's FIFO
	err := replay(func(rec kafka.Record) error {
		env, err := events.Decode(rec.Value)
		if err != nil {
			a.log.Error("undecodable event in the log; skipped", zap.Int64("offset", rec.Offset), zap.Error(err))
			return nil
		}
		if broken[env.RunID] {
			return nil
		}
		next, err := events.Fold(states[env.RunID], env)
		if err != nil {
			// The run's log breaks the protocol; driving it on would compound
			// the damage. Leave it alone and say so.
			a.log.Error("run log does not fold; run quarantined", zap.String("run_id", env.RunID), zap.Error(err))
			broken[env.RunID] = true
			return nil
		}
		states[env.RunID] = next
		if env.Type == events.RunAccepted {
			order = append(order, env.RunID)
		}
		sizes[env.RunID] += int64(len(rec.Value))
		switch {
		case next.Status.Terminal():
			delete(logs, env.RunID) // ended runs are not driven; free their events
		case env.Type != events.ItemDelta: // what Run.Events holds
			logs[env.RunID] = append(logs[env.RunID], env)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, id := range order {
		st := states[id]
		if broken[id] {
			continue
		}
		r := a.run(id)
		r.setState(st, logs[id], sizes[id])
		switch st.Status {
		case events.StatusRunning:
			r.lost = true
			a.hold(r)
		case events.StatusPaused:
			a.hold(r)
			a.armExpiry(st)
		case events.StatusQueued:
			a.enqueue(r)
		default:
		}
	}
	ex.mu.Lock()
	ex.actors[part.ID()] = a
	ex.mu.Unlock()
	a.resumeAll()
	go a.loop()
	return nil
}

// resumeAll drives what was in flight when the partition changed hands: runs
// that were running, paused runs with a pending command that may resume them,
// and the next queued run of every free sandbox key.
func (a *actor) resumeAll() {
	n := 0
	for _, r := range a.runs {
		st := r.State()
		if st.Status == events.StatusRunning || st.Status == events.StatusPaused && len(st.Pending) > 0 {
			a.startEngine(r)
			n++
		}
	}
	for k := range a.keys {
		a.schedule(k)
	}
	a.log.Debug("partition rebuilt", zap.Int("runs", len(a.runs)), zap.Int("resumed", n), zap.Int("sandbox_keys", len(a.keys)))
}

// startEngine drives one run in its own goroutine. At most one engine drives
// a run: when one is still running (it may be returning from a pause just as
// the command that resumes it arrives), it is asked to look again instead.
func (a *actor) startEngine(r *Run) {
	r.mu.Lock()
	if r.driving {
		r.again = true
		r.mu.Unlock()
		return
	}
	r.driving = true
	r.mu.Unlock()
	a.engines.Add(1)
	go func() {
		defer a.engines.Done()
		log := a.log.With(zap.String("run_id", r.ID()))
		for {
			if err := a.drive(r); err != nil && !stopped(a.ctx, err) {
				log.Error("run failed", zap.Error(err))
				a.failRun(r, err)
			}
			r.mu.Lock()
			again := r.again && a.ctx.Err() == nil
			r.again, r.driving = false, again
			r.mu.Unlock()
			if !again {
				return
			}
		}
	}()
}

// drive starts (queued), restores (running after a crash or rebalance) or
// wakes (paused) the run and hands it to the engine.
func (a *actor) drive(r *Run) error {
	st := r.State()
	if !st.Status.Active() {
		return nil
	}
	if st.Status == events.StatusQueued {
		p, err := a.start(r)
		if err != nil || p == nil {
			return err
		}
		return a.ex.engine.Execute(a.ctx, r, *p)
	}
	p, err := a.frozenProfile(r)
	if err != nil {
		return err
	}
	if st.Status == events.StatusRunning && r.lost {
		if err := a.restore(r); err != nil {
			return err
		}
	}
	// paused: the engine applies the command that resumes it
	return a.ex.engine.Execute(a.ctx, r, p)
}

// start freezes the run's capability snapshot and starts it (queued →
// running) in one append: the run never runs without its snapshot. A run
// whose profile cannot be resolved starts and fails at once, so it does not
// hold its sandbox key forever. It returns nil when the run did not start.
func (a *actor) start(r *Run) (*profile.Profile, error) {
	st := r.State()
	started := events.Draft{Type: events.RunStarted, Payload: events.RunStartedPayload{ExecutorID: a.ex.cfg.ID}}
	snap, err := a.ex.snapshot(st)
	if err != nil {
		a.log.Error("run cannot start", zap.String("run_id", r.ID()), zap.Error(err))
		_, aerr := r.Append(a.ctx, AppendOptions{}, started, events.Draft{Type: events.RunFailed,
			Payload: events.RunFailedPayload{ErrorCode: events.FailInternal, Message: err.Error()}})
		return nil, aerr
	}
	frozen, err := snap.Freeze()
	if err != nil {
		return nil, err
	}
	if _, err := r.Append(a.ctx, AppendOptions{}, events.Draft{Type: events.CapabilitySnapshotFrozen, Payload: frozen}, started); err != nil {
		return nil, err
	}
	return &snap.Profile, nil
}

// frozenProfile is the profile of the run's capability snapshot; a run that
// started before snapshots existed uses the current profile.
func (a *actor) frozenProfile(r *Run) (profile.Profile, error) {
	snap, err := profile.SnapshotOf(r.Events())
	if err == nil {
		return snap.Profile, nil
	}
	if !errors.Is(err, profile.ErrNoSnapshot) {
		return profile.Profile{}, err
	}
	p, ok := a.ex.profiles.Load().Get(r.State().AgentID)
	if !ok {
		return profile.Profile{}, errors.New("agent profile " + r.State().AgentID + " is no longer configured")
	}
	return p, nil
}

// restore records that this executor took the run over and closes the items
// the previous owner left open: their outcome is unknown (runtime_lost).
func (a *actor) restore(r *Run) error {
	st := r.State()
	var ids []string
	for _, it := range st.OpenItems() {
		ids = append(ids, it.ID)
	}
	drafts := append([]events.Draft{{Type: events.RunCheckpointRestored, Payload: events.CheckpointRestoredPayload{
		LastSeq: st.LastSeq, ExecutorID: a.ex.cfg.ID, OpenItems: ids}}},
		closeOpenItems(st, events.FailRuntimeLost, "the executor running this item stopped")...)
	if _, err := r.Append(a.ctx, AppendOptions{}, drafts...); err != nil {
		return err
	}
	r.lost = false
	return nil
}

// failRun ends a run whose engine returned an error; pending commands are
// closed as no_effect so none is dropped silently.
func (a *actor) failRun(r *Run, cause error) {
	st := r.State()
	if st.Status != events.StatusRunning {
		return
	}
	drafts := failDrafts(st, events.FailInternal, cause.Error())
	if _, err := r.Append(a.ctx, AppendOptions{}, drafts...); err != nil && !stopped(a.ctx, err) {
		a.log.Error("recording run failure failed", zap.String("run_id", r.ID()), zap.Error(err))
	}
}

// stopped reports whether err means "this executor no longer drives the run".
func stopped(ctx context.Context, err error) bool {
	return ctx.Err() != nil || errors.Is(err, kafka.ErrPartitionLost) || errors.Is(err, ErrRunEnded) ||
		errors.Is(err, context.Canceled)
}
