package executor

import (
	"time"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
)

// Scheduling: at most one run per sandbox key is
// active (running or paused); the key's other runs wait, queued, in the
// order they were accepted, and the next starts when the active one ends.
//
// Every run of a sandbox key lives on one partition: admission refuses a
// CreateRun whose runId is not on its key's partition (commands.RunIDFor
// places it there). A partition has a single writer, this worker, fenced by
// its transactional producer, so "which run holds the key" is decided by one
// goroutine over one log: no lock service, no cross-executor race. The queue
// is the partition's log itself (the runtime.run.accepted events of queued
// runs, in offset order), so it survives restarts: a new owner folds the
// partition and finds the same holder and the same queue.

// keyQueue is one sandbox key's FIFO of queued runs and its holder.
type keyQueue struct {
	holder string   // the run that is running or paused, or was started and has not ended
	queued []string // accepted, not started yet, oldest first
}

func sandboxKey(st events.RunState) string { return commands.SandboxKeyString(st.SandboxKey) }

// enqueue appends a newly accepted run to its key's queue.
func (w *partitionWorker) enqueue(r *Run) {
	k := sandboxKey(r.committed())
	q := w.keys[k]
	if q == nil {
		q = &keyQueue{}
		w.keys[k] = q
	}
	q.queued = append(q.queued, r.ID())
}

// hold records a run that is already active (found running or paused when
// the partition was rebuilt).
func (w *partitionWorker) hold(r *Run) {
	k := sandboxKey(r.committed())
	q := w.keys[k]
	if q == nil {
		q = &keyQueue{}
		w.keys[k] = q
	}
	if q.holder != "" && q.holder != r.ID() {
		// Only possible for runs started before keys were scheduled: let
		// both finish, and start nothing more until they have.
		w.log.Warn("two active runs share a sandbox key", zap.String("run_id", r.ID()), zap.String("other_run_id", q.holder))
		return
	}
	q.holder = r.ID()
}

// release frees the key of a run that ended, if it held it.
func (w *partitionWorker) release(st events.RunState) {
	q := w.keys[sandboxKey(st)]
	if q != nil && q.holder == st.RunID {
		q.holder = ""
	}
}

// schedule starts the oldest queued run of key k when no run holds it.
func (w *partitionWorker) schedule(k string) {
	q := w.keys[k]
	if q == nil || q.holder != "" {
		return
	}
	for len(q.queued) > 0 {
		id := q.queued[0]
		q.queued = q.queued[1:]
		r, ok := w.runs[id]
		if !ok || r.committed().Status != events.StatusQueued {
			continue // cancelled while it waited
		}
		q.holder = id
		w.startEngine(r)
		return
	}
	if q.holder == "" {
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
