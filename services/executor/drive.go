package executor

import (
	"context"
	"errors"
	"fmt"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/kafka"
)

// startEngine drives one run in its own goroutine. At most one engine drives
// a run: when one is still running (it may be returning from a pause just as
// the command that resumes it arrives), it is asked to look again instead.
func (w *partitionWorker) startEngine(r *Run) {
	r.mu.Lock()
	if r.driving {
		r.again = true
		r.mu.Unlock()
		return
	}
	r.driving = true
	r.mu.Unlock()
	w.engines.Add(1)
	go func() {
		defer w.engines.Done()
		log := w.log.With(zap.String("run_id", r.ID()))
		for {
			if err := w.drive(r); err != nil && !stopped(w.ctx, err) {
				log.Error("run failed", zap.Error(err))
				w.failRun(r, err)
			}
			r.mu.Lock()
			again := r.again && w.ctx.Err() == nil
			r.again, r.driving = false, again
			if !again && r.state.Status == events.StatusPaused {
				// Nobody drives it until a command resumes it, which may be
				// days away: its events are read again then.
				r.hist, r.loaded = nil, false
			}
			r.mu.Unlock()
			if !again {
				return
			}
		}
	}()
}

// drive starts (queued), restores (running after a crash or rebalance) or
// wakes (paused, or queued after a resume and given its key) the run and
// hands it to the engine.
func (w *partitionWorker) drive(r *Run) error {
	st := r.State()
	if !st.Status.Active() {
		return nil
	}
	if err := r.loadHistory(w.ctx); err != nil {
		return fmt.Errorf("read the run's events: %w", err)
	}
	if st.Status == events.StatusQueued && !st.Requeued {
		if p, ok := w.ex.profiles.Load().Get(st.AgentID); ok && w.ex.startsItself(st.AgentID) {
			return w.ex.engine.Execute(w.ctx, r, p) // it calls Run.Start first (Starter)
		}
		p, err := w.start(r)
		if err != nil || p == nil {
			return err
		}
		return w.ex.engine.Execute(w.ctx, r, *p)
	}
	p, ok := r.takeStartProfile()
	if !ok {
		var err error
		if p, err = w.frozenProfile(r); err != nil {
			return err
		}
	}
	if st.Status == events.StatusRunning && r.lost {
		if err := w.restore(r); err != nil {
			return err
		}
	}
	// paused, or queued after a resume: the engine applies the command that
	// resumes it
	return w.ex.engine.Execute(w.ctx, r, p)
}

// failRun ends a run whose engine returned an error; pending commands are
// closed as no_effect so none is dropped silently. A run given its key
// after a resume (queued) resumes to fail, so that it does not hold its key
// forever.
func (w *partitionWorker) failRun(r *Run, cause error) {
	st := r.State()
	requeued := st.Status == events.StatusQueued && st.Requeued
	if st.Status != events.StatusRunning && !requeued {
		return
	}
	code := events.FailInternal
	if errors.Is(cause, ErrHistoryGone) {
		code = events.FailHistoryUnavailable
	}
	drafts := failDrafts(st, code, cause.Error())
	if requeued {
		drafts = append([]events.Draft{{Type: events.RunResumed}}, drafts...)
	}
	if _, err := r.Append(w.ctx, AppendOptions{}, drafts...); err != nil && !stopped(w.ctx, err) {
		w.log.Error("recording run failure failed", zap.String("run_id", r.ID()), zap.Error(err))
	}
}

// stopped reports whether err means "this executor no longer drives the run".
func stopped(ctx context.Context, err error) bool {
	return ctx.Err() != nil || errors.Is(err, kafka.ErrPartitionLost) || errors.Is(err, ErrRunEnded) ||
		errors.Is(err, context.Canceled)
}
