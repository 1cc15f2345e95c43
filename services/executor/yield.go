package executor

import (
	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
)

// The yield of a paused run (sched.go): a command that resumes a paused run
// gives it its sandbox key back when the key is free; otherwise the run
// waits queued (paused → queued) and resumes when the scheduler gives it the
// key. Decided at admission, in the command's transaction, so a new owner
// finds the same queue.

// resumeOrQueue adjusts decision d of command c on the run in st. A decision
// that resumes a paused run (the last approval decided, or a clarification
// accepted) takes the key when it is free. Otherwise the run's resume waits:
// an approval's runtime.run.resumed is replaced by runtime.run.queued, a
// clarification stays pending until the run gets the key, and the engine is
// not woken.
func (b *batch) resumeOrQueue(st *events.RunState, c commands.Envelope, payload any, d commands.Decision) commands.Decision {
	if !resumes(*st, d, payload) {
		return d
	}
	k := sandboxKey(*st)
	if b.keyFree(k) || b.heldBy(k, c.RunID) {
		b.keyTaken[k] = true
		b.claimed = append(b.claimed, c.RunID)
		return d
	}
	if n := len(d.Events); n > 0 && d.Events[n-1].Type == events.RunResumed {
		d.Events = d.Events[:n-1]
	}
	d.Events = append(d.Events, b.queuedDraft(k, c.CommandID))
	d.Then = commands.EffectNone
	b.join(c.RunID)
	return d
}

// resumes reports whether decision d resumes the paused run in st.
func resumes(st events.RunState, d commands.Decision, payload any) bool {
	if st.Status != events.StatusPaused {
		return false
	}
	if n := len(d.Events); n > 0 && d.Events[n-1].Type == events.RunResumed {
		return true
	}
	// An input that wakes a paused run answers its question: a
	// clarification, or a session message the decider made one.
	_, ok := payload.(*commands.AppendUserInputPayload)
	return ok && d.Then == commands.EffectWake
}

// keyFree reports whether a run of this batch may take key k now: no run
// holds it or waits for it, and no earlier run of this batch asked for it.
func (b *batch) keyFree(k string) bool {
	q := b.w.keys[k]
	return !b.keyTaken[k] && (q == nil || q.holder == "" && len(q.queued) == 0)
}

// heldBy reports whether run id holds key k: it paused in this batch, which
// frees the key only when the batch commits, and is resumed in it too.
func (b *batch) heldBy(k, id string) bool {
	q := b.w.keys[k]
	return q != nil && q.holder == id
}

// join records that run id joined its key's queue in this batch: it is
// placed behind the runs that joined before it.
func (b *batch) join(id string) {
	b.enqueue = append(b.enqueue, id)
	b.orders[id] = b.nextOrder
	b.nextOrder++
}

// queuedDraft is the runtime.run.queued of a run joining key k's queue now.
func (b *batch) queuedDraft(k, commandID string) events.Draft {
	return events.Draft{Type: events.RunQueued, CommandID: commandID,
		Payload: events.RunQueuedPayload{Position: b.nextPosition(k)}}
}

// nextPosition is the place of the next run to join key k's queue.
func (b *batch) nextPosition(k string) int {
	n := 1
	if q := b.w.keys[k]; q != nil {
		for _, id := range q.queued {
			if b.peek(id).Status == events.StatusQueued {
				n++
			}
		}
	}
	for _, id := range b.enqueue {
		if st := b.peek(id); sandboxKey(st) == k && st.Status == events.StatusQueued {
			n++
		}
	}
	return n
}

// peek is run id's state as this batch leaves it so far, without staging it.
func (b *batch) peek(id string) events.RunState {
	if s, ok := b.staged[id]; ok {
		return *s
	}
	if r, ok := b.w.runs[id]; ok {
		return r.committed()
	}
	return events.RunState{}
}

// positionsReq asks the loop to have key's queued runs record their places.
type positionsReq struct{ key string }

// requestPositions submits a positionsReq from a goroutine of its own: the
// loop, which calls it, must not wait on its own inbox. The request is read
// against the queue as it is when it is handled, so requests handled in any
// order record the same places.
func (w *partitionWorker) requestPositions(k string) {
	go func() { _ = w.submit(w.ctx, positionsReq{key: k}) }()
}

// exactPlaces is how near the front a waiting run records its place each
// time it moves up. Further back a run records its place again only once
// the place has halved since it last recorded one, so as a queue of n runs
// drains it records O(n log n) places, not n(n+1)/2, and a place shown for
// a run further back than exactPlaces is at most about twice its real one.
const exactPlaces = 10

// worthRecording reports whether a waiting run whose last recorded place is
// recorded, now at place pos, records pos.
func worthRecording(recorded, pos int) bool {
	switch {
	case pos == recorded:
		return false
	case recorded == 0 || pos > recorded || pos <= exactPlaces:
		return true
	default:
		return 2*pos <= recorded
	}
}

// positions records the place of each run waiting in key k's queue whose
// last recorded place is worth replacing (worthRecording).
func (b *batch) positions(k string) {
	q := b.w.keys[k]
	if q == nil {
		return
	}
	pos := 0
	for _, id := range q.queued {
		st := b.peek(id)
		if st.Status != events.StatusQueued {
			continue
		}
		pos++
		if !worthRecording(st.QueuePosition, pos) {
			continue
		}
		ident := events.Identity{RunID: id, TenantID: st.TenantID, PlatformSessionID: st.PlatformSessionID}
		d := events.Draft{Type: events.RunQueued, Payload: events.RunQueuedPayload{Position: pos}}
		if err := b.push(ident, []events.Draft{d}); err != nil {
			b.w.log.Error("recording a queued run's place failed", zap.String("run_id", id), zap.Error(err))
		}
	}
}
