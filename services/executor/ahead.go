package executor

import (
	"context"

	"github.com/xbot-runtime/xbot/events"
)

// Appends that do not wait for their commit.
//
// The worker folds every append in the order it was submitted, so seq stays
// gap-free and a run's events commit in that order whether or not their
// engine waited: an append that waits for its commit (a tool call's start,
// a pause, the run's end) commits, in the same transaction or a later one,
// everything the run appended before it. An engine therefore waits only
// before a side effect starts and before a promise to a client; its other
// facts (an item's deltas, a model response) join the partition's next
// group commit while the engine goes on. When such an append is refused or
// its transaction fails, the partition is given up as for any failed commit
// and the run's next append fails. A crash loses only what had not committed,
// which a new owner treats like any crash (the truncated item is closed
// runtime_lost).

// ahead is what the worker folded for a run in the batch it is committing:
// the staged state, the run's committed events followed by those of the
// batch (deltas left out, as in Run.Events; nil when the run's events are
// not loaded), how many of the batch's sealed events of the run those
// include and whether they were built on the loaded ones (the engine may
// load them between two folds), and the batch's encoded size. The batch's
// commit clears it.
type ahead struct {
	state  *events.RunState
	events []events.Envelope
	sealed int
	loaded bool
	bytes  int64
}

// onCommitted returns the run's committed events followed by the non-delta
// events of sealed, the batch's, building on what this batch folded
// before. r.mu is held and the events are loaded.
func (r *Run) onCommitted(sealed []events.Envelope) []events.Envelope {
	evs, from := r.hist, 0
	if r.ahead.state != nil && r.ahead.loaded { // folded in this batch on the loaded events
		evs, from = r.ahead.events, r.ahead.sealed
	}
	for _, e := range sealed[from:] {
		if e.Type != events.ItemDelta {
			evs = append(evs, e)
		}
	}
	return evs
}

// committed returns the committed state of the run; the loop decides on it.
func (r *Run) committed() events.RunState {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.state
}

// Post hands drafts to the worker and returns at once: they are folded in
// order with the run's other appends and commit with the partition's next
// transaction. It is for facts nothing reads back nor waits on (an item's
// deltas). A post that is refused or does not commit fails the run's next
// Append or Post.
func (r *Run) Post(ctx context.Context, drafts ...events.Draft) error {
	if err := r.asyncErr(); err != nil {
		return err
	}
	return r.worker.submit(ctx, &appendReq{run: r, runID: r.id, drafts: drafts, posted: true, done: make(chan appendResult, 1)})
}

// asyncErr returns, once, why an append that did not wait failed.
func (r *Run) asyncErr() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	err := r.lostAppend
	r.lostAppend = nil
	return err
}

// loseAppend records that an append of the run that did not wait failed.
func (r *Run) loseAppend(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.lostAppend == nil {
		r.lostAppend = err
	}
}

// refuse refuses the request; a refused post fails the run's next append,
// and so does one that was refused because an earlier post was.
func (b *batch) refuse(req *appendReq, err error) {
	if req.posted {
		req.run.loseAppend(err)
	}
	b.refused = append(b.refused, refusal{req, err})
}

// fold makes the request's drafts, staged by this batch, what the run's
// engine sees (Run.State, Run.Events), and answers it before the commit.
//
// The events are not copied: the batch's go on after the committed ones, in
// the spare capacity of their array when it has some, each fold appending
// what the batch sealed since the one before, and the commit takes them as
// the committed events (Run.setState). Readers hold the events with their
// capacity cut to their length (Run.Events), so an append writes only past
// what any of them sees. A batch that fails to commit gives the partition
// up, and its runs with it. So a fold costs what the batch added, not the
// length of the run (a model's response posts many deltas, each folded).
func (b *batch) fold(req *appendReq) {
	st := *b.staged[req.runID]
	r := req.run
	r.mu.Lock()
	sealed := b.sealed[req.runID]
	var evs []events.Envelope
	if r.loaded {
		evs = r.onCommitted(sealed)
	}
	r.ahead = ahead{state: &st, events: evs, sealed: len(sealed), loaded: r.loaded, bytes: b.sizes[req.runID]}
	r.mu.Unlock()
	b.folded = append(b.folded, r)
	req.done <- appendResult{state: st}
}
