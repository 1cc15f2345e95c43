package executor

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/services/engine/profile"
)

// ErrPendingCommands is returned by a conditional append when commands wait
// for a safe point; the engine must pass one before it may end the run.
var ErrPendingCommands = errors.New("commands are pending")

// ErrRunEnded is returned when the run reached a terminal state.
var ErrRunEnded = errors.New("run has ended")

// Run is an engine's handle on one run. Its methods are safe for concurrent use.
type Run struct {
	id     string
	worker *partitionWorker

	mu    sync.Mutex
	state events.RunState
	// hist is the committed events of an active run but its item deltas (see
	// Events), when loaded: a run this worker accepted has them from the
	// start; one it took over or unloaded reads them from the log when an
	// engine drives it (loadHistory). Nil once it ended.
	hist   []events.Envelope
	loaded bool
	// from is an offset of the events topic at or before the run's first
	// event (-1 until its first commit); order is its queue position;
	// history locates its session's earlier runs (nil: not known).
	from    int64
	to      int64 // one after (or past) its last event
	order   int64
	history *commands.SessionHistory
	// logBytes is the size of the run's committed events on the log (the
	// encoded record values), deltas included.
	logBytes int64
	// ahead is what the worker folded for the run but has not committed yet
	// (ahead.go): the engine goes on from it; the loop reads only the
	// committed state.
	ahead ahead
	// lostAppend is why an append that did not wait was refused or did not
	// commit; the run's next append fails with it.
	lostAppend error
	interrupt  context.CancelFunc
	driving    bool // an engine goroutine owns the run
	// lost is set when this executor took the run over while it was running
	// (a crash or a rebalance): the previous owner may have been mid-step,
	// so the first drive restores it. Only the loop (at rebuild) and the
	// driving goroutine touch it.
	lost  bool
	again bool // a command arrived that the driving engine may have missed
	// started is the profile of the snapshot its admission started it with
	// (startAtAdmission), until its first drive takes it.
	started *profile.Profile
}

// ID returns the run id.
func (r *Run) ID() string { return r.id }

// State returns the state of the run: the committed one, followed by what
// the run's engine appended without waiting (AppendOptions.NoWait) and the
// worker folded, which commits with the partition's next transaction.
func (r *Run) State() events.RunState {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ahead.state != nil {
		return *r.ahead.state
	}
	return r.state
}

// Events returns the run's events, oldest first, as State sees them, except
// its runtime.item.delta events: the streamed text is repeated (or, past a
// cap, previewed) by the item's closing event, no engine decision reads it,
// and keeping it would let one item's output fill the executor's memory. The
// slice must not be modified.
func (r *Run) Events() []events.Envelope {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ahead.events != nil {
		return r.ahead.events[:len(r.ahead.events):len(r.ahead.events)]
	}
	return r.hist[:len(r.hist):len(r.hist)]
}

// SessionHistory returns the committed events of the run's ancestors (its
// parentRunId chain, oldest run first, at most commands.MaxHistoryRuns): the
// earlier turns of the session a follow-up continues. Like Events, it holds
// no item deltas. A follow-up reads them from the offset ranges its create
// carries; a run that names its parent itself finds them through the
// parent's checkpoint (parentHistory), and only a parent written before
// checkpoints existed is searched for on its partition (sessionHistory).
func (r *Run) SessionHistory(ctx context.Context) ([][]events.Envelope, error) {
	st := r.State()
	if st.ParentRunID == "" {
		return nil, nil
	}
	r.mu.Lock()
	h := r.history
	r.mu.Unlock()
	if h == nil {
		// A create that named its parent itself: its parent's checkpoint
		// says where the session is.
		var err error
		if h, err = r.worker.ex.parentHistory(ctx, st.ParentRunID, r.worker.part.Partitions()); err != nil {
			return nil, err
		}
	}
	if h != nil {
		return r.worker.ex.readHistory(ctx, st.TenantID, h.Runs)
	}
	return r.worker.ex.sessionHistory(ctx, st.TenantID, st.ParentRunID, r.worker.part.Partitions())
}

// sessionRefs locates the run and its session's earlier runs, for the
// create of a follow-up on it: nil when its own history is not known.
// Called by the loop only.
func (r *Run) sessionRefs(eventsEnd int64) *commands.SessionHistory {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.history == nil && r.state.ParentRunID != "" {
		return nil
	}
	var runs []commands.HistoryRef
	if r.history != nil {
		runs = append(runs, r.history.Runs...)
	}
	to := r.to
	if to <= 0 {
		to = eventsEnd // not known (a run checkpointed before it was recorded)
	}
	runs = append(runs, commands.HistoryRef{RunID: r.id, Partition: r.worker.part.ID(), From: max(r.from, 0), To: to})
	if n := len(runs) - commands.MaxHistoryRuns; n > 0 {
		runs = runs[n:]
	}
	return &commands.SessionHistory{Runs: runs}
}

// EventBytes returns the size in bytes of the run's events as encoded on
// the log, every event counted (deltas too), those State sees included.
func (r *Run) EventBytes() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.logBytes + r.ahead.bytes
}

// setState installs a committed state and the events that led to it, which
// take addedBytes on the log.
func (r *Run) setState(s events.RunState, added []events.Envelope, addedBytes int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.state = s
	r.logBytes += addedBytes
	defer func() { r.ahead = ahead{} }() // the batch that folded it committed
	if s.Status.Terminal() {
		r.hist, r.loaded = nil, false // nobody drives an ended run; its log stays in Kafka
		return
	}
	if !r.loaded {
		return // read from the log when an engine needs them
	}
	r.hist = r.onCommitted(added)
}

// Step returns a context for one interruptible step (a model stream, a batch
// of tool calls): it is cancelled when a command that must interrupt the run
// (a cancel) is accepted, or when ctx ends.
func (r *Run) Step(ctx context.Context) (context.Context, context.CancelFunc) {
	sctx, cancel := context.WithCancel(ctx)
	r.mu.Lock()
	r.interrupt = cancel
	interrupted := commands.HasPending(r.state, commands.CancelRun)
	r.mu.Unlock()
	if interrupted {
		cancel()
	}
	return sctx, cancel
}

func (r *Run) interruptStep() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.interrupt != nil {
		r.interrupt()
	}
}

// AppendOptions condition an append.
type AppendOptions struct {
	// IfNoPending refuses the append with ErrPendingCommands when commands
	// wait for a safe point. Engines set it on appends that end the run.
	IfNoPending bool
	// NoWait returns once the drafts are folded, in order, onto the run's
	// state (State and Events show them), without waiting for their commit:
	// they join the partition's next transaction. Engines set it on facts
	// that neither start a side effect nor answer a client; the next append
	// that waits commits them too, or fails when they did not commit.
	NoWait bool
	// Send are commands produced in the same transaction as the drafts (an
	// interrupt's follow-up of the session's next run).
	Send []commands.Envelope
}

// Append appends drafts atomically (all or none) and returns the new state
// once they are committed (or, with NoWait, folded). Fold errors mean an
// engine bug and are returned as is; ownership errors (the partition moved)
// mean the engine must stop. An earlier append that did not wait and did not
// commit fails this one.
func (r *Run) Append(ctx context.Context, opts AppendOptions, drafts ...events.Draft) (events.RunState, error) {
	if err := r.asyncErr(); err != nil {
		return r.State(), err
	}
	req := &appendReq{run: r, runID: r.id, drafts: drafts, opts: opts, done: make(chan appendResult, 1)}
	if err := r.worker.submit(ctx, req); err != nil {
		return r.State(), err
	}
	select {
	case res := <-req.done:
		return res.state, res.err
	case <-ctx.Done():
		return r.State(), ctx.Err()
	}
}

// SafePointOptions tell a safe point what the engine holds that a command
// applied there must account for.
type SafePointOptions struct {
	// Unstarted are tool calls the model requested that have no item yet. A
	// cancel records each as a cancelled item, so the run's history stays a
	// valid provider conversation (every call has a result).
	Unstarted []events.Draft
}

// SafePoint applies the buffered commands that take effect at point sp:
// a cancel at every point; steers, in the order they were
// accepted, at before_model_request of a running run, where each becomes a
// user_message item (a paused or queued run keeps them until it runs).
// It returns stop=true when the run has ended and the engine must return.
func (r *Run) SafePoint(ctx context.Context, sp SafePoint, opts SafePointOptions) (stop bool, err error) {
	st := r.State()
	if st.Status.Terminal() {
		return true, nil
	}
	if p, ok := commands.PendingCancel(st); ok {
		o, drafts := r.cancelAppend(st, p, opts.Unstarted)
		if _, err := r.Append(ctx, o, drafts...); err != nil {
			return false, err
		}
		return true, nil
	}
	var drafts []events.Draft
	switch sp {
	case BeforeRunTerminal:
		drafts = commands.UnneededCompactions(st)
	case BeforeModelRequest:
		if st.Status == events.StatusRunning { // a resting run keeps its steers for when it runs
			drafts = commands.SteerEvents(st)
		}
	case AfterModelResponse, BeforeToolExecution, AfterToolResult:
	}
	if len(drafts) == 0 {
		return false, nil
	}
	_, err = r.Append(ctx, AppendOptions{}, drafts...)
	return false, err
}

// PendingCompaction returns the oldest RequestCompaction waiting for the
// next before_model_request.
func (r *Run) PendingCompaction() (events.PendingCommand, bool) {
	return commands.PendingCompaction(r.State())
}

// Compacted appends a compaction artifact. With a pending RequestCompaction
// (manual), the artifact carries its commandId and the command is applied
// in the same append; a failed compaction (art == nil) closes it as
// no_effect with reason.
func (r *Run) Compacted(ctx context.Context, art *events.ContextCompactedPayload, manual *events.PendingCommand, reason string) error {
	drafts := commands.CompactionEvents(art, manual, reason)
	if len(drafts) == 0 {
		return nil
	}
	_, err := r.Append(ctx, AppendOptions{}, drafts...)
	return err
}

// Resume applies the command a paused run waits for: a clarification answers
// the open clarification_request item (completing it with the answer) and the
// run resumes. A run that was resumed while another run held its sandbox key
// (Waiting) resumes now that it has the key, applying its clarification if
// it waited with one. It returns resumed=false when no such command is
// pending.
func (r *Run) Resume(ctx context.Context, answer func(item events.ItemRef, content string) events.Draft) (resumed bool, err error) {
	st := r.State()
	if !r.Waiting() {
		return false, nil
	}
	drafts, ok := commands.ClarificationEvents(st, answer)
	if !ok && st.Requeued {
		drafts, ok = []events.Draft{{Type: events.RunResumed}}, true
	}
	if !ok {
		return false, nil
	}
	if _, err := r.Append(ctx, AppendOptions{}, drafts...); err != nil {
		return false, err
	}
	return true, nil
}

// Waiting reports whether the run is at rest: paused, or queued after a
// resume (an engine driving it must Resume it first).
func (r *Run) Waiting() bool {
	st := r.State()
	return st.Status == events.StatusPaused || st.Status == events.StatusQueued && st.Requeued
}

// Fail ends the run as failed with code: open items fail with the same code
// and pending commands are closed as no_effect, so none is dropped silently.
func (r *Run) Fail(ctx context.Context, code, msg string) error {
	st := r.State()
	if st.Status != events.StatusRunning {
		return nil
	}
	_, err := r.Append(ctx, AppendOptions{}, failDrafts(st, code, msg)...)
	return err
}

// loadHistory reads the run's events from the log when the worker did not
// see them all (it took the run over, or unloaded it while it was paused):
// from the run's first offset on, until it has every event up to the
// committed state's seq. The engine goroutine calls it before driving.
func (r *Run) loadHistory(ctx context.Context) error {
	r.mu.Lock()
	if r.loaded {
		r.mu.Unlock()
		return nil
	}
	from := max(r.from, 0)
	r.mu.Unlock()
	w := r.worker
	var evs []events.Envelope
	var last int64
	for {
		next, err := kafka.ReadRange(ctx, w.ex.cfg.Kafka, w.ex.cfg.Kafka.EventsTopic(), w.part.ID(), from, -1, func(rec kafka.Record) error {
			if rec.Key != r.id {
				return nil
			}
			env, err := events.Decode(rec.Value)
			if err != nil {
				return fmt.Errorf("event at offset %d: %w", rec.Offset, err)
			}
			if env.Seq != last+1 {
				return fmt.Errorf("run %s: seq %d after %d at offset %d: %w", r.id, env.Seq, last, rec.Offset, ErrHistoryGone)
			}
			last = env.Seq
			if env.Type != events.ItemDelta {
				evs = append(evs, env)
			}
			return nil
		})
		if err != nil {
			return err
		}
		from = next
		r.mu.Lock()
		if last >= r.state.LastSeq {
			// What committed after the state was read is appended by the
			// next setState; keep only what the state has seen.
			n := len(evs)
			for n > 0 && evs[n-1].Seq > r.state.LastSeq {
				n--
			}
			r.hist, r.loaded = evs[:n:n], true
			r.mu.Unlock()
			return nil
		}
		r.mu.Unlock()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}
