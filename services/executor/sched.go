package executor

import (
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
)

// Scheduling: at most one run per sandbox key runs at a time. The key's
// other runs wait, queued, in the order they joined the queue, and the next
// starts when the key is free. A run joins the queue when it is accepted
// while the key is taken, or when it is resumed from a pause while the key
// is taken: a run paused for a person (an approval, a question) yields its
// key, so the next run of the key may start meanwhile, and the paused run
// waits its turn again, behind the runs queued before its resume. Each
// queued run records its place (runtime.run.queued, 1 = next to start) when
// it joins and each time it moves up.
//
// Every run of a sandbox key lives on one partition: admission refuses a
// CreateRun whose runId is not on its key's partition (commands.RunIDFor
// places it there). A partition has a single writer, this worker, fenced by
// its transactional producer, so "which run holds the key" is decided by one
// goroutine over one log: no lock service, no cross-executor race. The queue
// order is in the log and in the runs' checkpoints (runCheckpoint.Order:
// when each run joined), so a new owner finds the same holder and the same
// queue.

// keyQueue is one sandbox key's FIFO of queued runs and its holder.
type keyQueue struct {
	holder string   // the run that is running, or was given the key and has not paused or ended
	queued []string // waiting for the key, in the order they joined
}

func sandboxKey(st events.RunState) string { return commands.SandboxKeyString(st.SandboxKey) }

func (w *partitionWorker) queueOf(k string) *keyQueue {
	q := w.keys[k]
	if q == nil {
		q = &keyQueue{}
		w.keys[k] = q
	}
	return q
}

// enqueue appends a run that joined its key's queue.
func (w *partitionWorker) enqueue(r *Run) {
	q := w.queueOf(sandboxKey(r.committed()))
	q.queued = append(q.queued, r.ID())
}

// hold records the run that holds its key: started or resumed at admission,
// or found holding it when the partition was rebuilt (holdsKey).
func (w *partitionWorker) hold(r *Run) {
	q := w.queueOf(sandboxKey(r.committed()))
	if q.holder != "" && q.holder != r.ID() {
		// Only possible for runs started before keys were scheduled: let
		// both finish, and start nothing more until they have.
		w.log.Warn("two active runs share a sandbox key", zap.String("run_id", r.ID()), zap.String("other_run_id", q.holder))
		return
	}
	q.holder = r.ID()
}

// release frees the key of a run that paused or ended, if it held it; it
// reports whether it did.
func (w *partitionWorker) release(st events.RunState) bool {
	q := w.keys[sandboxKey(st)]
	if q == nil || q.holder != st.RunID {
		return false
	}
	q.holder = ""
	return true
}

// holdsKey reports whether a run in state st holds its key: it runs, or it
// is paused with an accepted answer that resumes it (its key was free then).
func holdsKey(st events.RunState) bool {
	switch st.Status {
	case events.StatusRunning:
		return true
	case events.StatusPaused:
		return pendingClarification(st)
	default:
		return false
	}
}

func pendingClarification(st events.RunState) bool {
	for _, p := range st.Pending {
		if in, ok := commands.PendingInput(p); ok && in.Intent == commands.IntentClarification {
			return true
		}
	}
	return false
}

// schedule drops the runs that left key k's queue (cancelled while they
// waited), starts (or resumes) the oldest queued run when no run holds the
// key, and has the runs still waiting record their new places.
func (w *partitionWorker) schedule(k string) {
	q := w.keys[k]
	if q == nil {
		return
	}
	q.queued = slices.DeleteFunc(q.queued, func(id string) bool {
		r, ok := w.runs[id]
		return !ok || r.committed().Status != events.StatusQueued
	})
	if q.holder == "" && len(q.queued) > 0 {
		q.holder = q.queued[0]
		q.queued = q.queued[1:]
		w.startEngine(w.runs[q.holder])
	}
	switch {
	case len(q.queued) > 0:
		w.requestPositions(k)
	case q.holder == "":
		delete(w.keys, k)
	}
}

// armExpiry schedules the pause-TTL check of a paused run. The deadline comes
// from the log (the pause's time and the snapshot's TTL), so a new owner
// re-arms the same deadline after a restart.
func (w *partitionWorker) armExpiry(st events.RunState) {
	if t, ok := w.timers[st.RunID]; ok {
		t.Stop()
		delete(w.timers, st.RunID)
	}
	deadline, ok := st.PauseDeadline()
	if !ok {
		return
	}
	req := expireReq{runID: st.RunID, pausedAt: st.PausedAt}
	w.timers[st.RunID] = time.AfterFunc(time.Until(time.UnixMilli(deadline)), func() {
		_ = w.submit(w.ctx, req)
	})
}

// expireReq asks the loop to expire a run whose pause (at pausedAt) is over.
type expireReq struct {
	runID    string
	pausedAt int64
}

// expire records the expiry if the run is still in the pause that timed out.
func (b *batch) expire(req expireReq) {
	st := b.state(req.runID)
	deadline, ok := st.PauseDeadline()
	if !ok || st.PausedAt != req.pausedAt || b.now < deadline {
		return // resumed, ended or paused again since
	}
	id := events.Identity{RunID: st.RunID, TenantID: st.TenantID, PlatformSessionID: st.PlatformSessionID}
	if err := b.push(id, expireDrafts(*st)); err != nil {
		b.w.log.Error("expiring a paused run failed", zap.String("run_id", req.runID), zap.Error(err))
	}
}
