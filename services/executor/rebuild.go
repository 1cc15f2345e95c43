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
		return nil
	})
	if err != nil {
		return err
	}
	for id, st := range states {
		if !broken[id] {
			a.run(id).setState(st)
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
		switch r.State().Status {
		case events.StatusQueued:
			a.startEngine(r, false)
			n++
		case events.StatusRunning:
			a.startEngine(r, true)
			n++
		default: // paused runs wait for a command; terminal ones are done
		}
	}
	a.log.Debug("partition rebuilt", zap.Int("runs", len(a.runs)), zap.Int("resumed", n))
}

// startEngine drives one run in its own goroutine.
func (a *actor) startEngine(r *Run, restored bool) {
	a.engines.Add(1)
	go func() {
		defer a.engines.Done()
		log := a.log.With(zap.String("run_id", r.ID()))
		if err := a.drive(r, restored); err != nil && !stopped(a.ctx, err) {
			log.Error("run failed", zap.Error(err))
			a.failRun(r, err)
		}
	}()
}

func (a *actor) drive(r *Run, restored bool) error {
	st := r.State()
	p, ok := a.ex.profiles.Get(st.AgentID)
	if !ok {
		return errors.New("agent profile " + st.AgentID + " is no longer configured")
	}
	var err error
	if restored {
		err = a.restore(r)
	} else {
		_, err = r.Append(a.ctx, AppendOptions{}, events.Draft{Type: events.RunStarted,
			Payload: events.RunStartedPayload{ExecutorID: a.ex.cfg.ID}})
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
	_, err := r.Append(a.ctx, AppendOptions{}, drafts...)
	return err
}

// failRun ends a run whose engine returned an error; pending commands are
// closed as no_effect so none is dropped silently.
func (a *actor) failRun(r *Run, cause error) {
	st := r.State()
	if st.Status != events.StatusRunning {
		return
	}
	drafts := closeOpenItems(st, events.FailInternal, "run failed")
	drafts = append(drafts, events.Draft{Type: events.RunFailed, Payload: events.RunFailedPayload{
		ErrorCode: events.FailInternal, Message: cause.Error()}})
	for _, p := range st.Pending {
		drafts = append(drafts, events.Draft{Type: events.CommandNoEffect, CommandID: p.CommandID, Payload: events.CommandNoEffectPayload{
			CommandType: p.Type, IdempotencyKey: p.IdempotencyKey, Reason: "the run failed before the command could apply"}})
	}
	if _, err := r.Append(a.ctx, AppendOptions{}, drafts...); err != nil && !stopped(a.ctx, err) {
		a.log.Error("recording run failure failed", zap.String("run_id", r.ID()), zap.Error(err))
	}
}

// stopped reports whether err means "this executor no longer drives the run".
func stopped(ctx context.Context, err error) bool {
	return ctx.Err() != nil || errors.Is(err, kafka.ErrPartitionLost) || errors.Is(err, ErrRunEnded) ||
		errors.Is(err, context.Canceled)
}
