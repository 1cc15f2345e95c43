package executor

import (
	"context"
	"errors"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/kafka"
)

// Assigned implements kafka.Handler: it folds the partition's committed
// events into run states, then resumes every run that was queued or running.
func (ex *Executor) Assigned(ctx context.Context, part *kafka.Partition, replay func(func(kafka.Record) error) error) error {
	a := newActor(ctx, ex, part)
	broken := map[string]bool{}
	states := map[string]events.RunState{}
	logs := map[string][]events.Envelope{}
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
		if next.Status.Terminal() {
			delete(logs, env.RunID) // ended runs are not driven; free their events
		} else {
			logs[env.RunID] = append(logs[env.RunID], env)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for id, st := range states {
		if !broken[id] {
			a.run(id).setState(st, logs[id])
		}
	}
	ex.mu.Lock()
	ex.actors[part.ID()] = a
	ex.mu.Unlock()
	go a.loop()
	a.resumeAll()
	return nil
}

func (a *actor) resumeAll() {
	n := 0
	for _, r := range a.runs {
		st := r.State()
		switch {
		case st.Status == events.StatusQueued, st.Status == events.StatusRunning,
			st.Status == events.StatusPaused && len(st.Pending) > 0: // a resuming command was accepted before the crash
			a.startEngine(r)
			n++
		default: // other paused runs wait for a command; terminal ones are done
		}
	}
	a.log.Debug("partition rebuilt", zap.Int("runs", len(a.runs)), zap.Int("resumed", n))
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
	p, ok := a.ex.profiles.Get(st.AgentID)
	if !ok {
		return errors.New("agent profile " + st.AgentID + " is no longer configured")
	}
	var err error
	switch st.Status {
	case events.StatusQueued:
		_, err = r.Append(a.ctx, AppendOptions{}, events.Draft{Type: events.RunStarted,
			Payload: events.RunStartedPayload{ExecutorID: a.ex.cfg.ID}})
		r.restored = err == nil
	case events.StatusRunning:
		if !r.restored {
			err = a.restore(r)
		}
	default: // paused: the engine applies the command that resumes it
	}
	if err != nil {
		return err
	}
	return a.ex.engine.Execute(a.ctx, r, p)
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
	r.restored = true
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
