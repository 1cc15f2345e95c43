package executor

import (
	"context"
	"errors"
	"sync"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
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
	// Events); nil once it ended.
	hist []events.Envelope
	// logBytes is the size of the run's committed events on the log (the
	// encoded record values), deltas included.
	logBytes  int64
	interrupt context.CancelFunc
	driving   bool // an engine goroutine owns the run
	// lost is set when this executor took the run over while it was running
	// (a crash or a rebalance): the previous owner may have been mid-step,
	// so the first drive restores it. Only the loop (at rebuild) and the
	// driving goroutine touch it.
	lost  bool
	again bool // a command arrived that the driving engine may have missed
}

// ID returns the run id.
func (r *Run) ID() string { return r.id }

// State returns the committed state of the run.
func (r *Run) State() events.RunState {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.state
}

// Events returns the run's committed events, oldest first, except its
// runtime.item.delta events: the streamed text is repeated (or, past a cap,
// previewed) by the item's closing event, no engine decision reads it, and
// keeping it would let one item's output fill the executor's memory. The
// slice must not be modified.
func (r *Run) Events() []events.Envelope {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.hist[:len(r.hist):len(r.hist)]
}

// SessionHistory returns the committed events of the run's ancestors (its
// parentRunId chain, oldest run first): the earlier turns of the session a
// follow-up continues. Like Events, it holds no item deltas.
func (r *Run) SessionHistory(ctx context.Context) ([][]events.Envelope, error) {
	st := r.State()
	return r.worker.ex.sessionHistory(ctx, st.TenantID, st.ParentRunID, r.worker.part.Partitions())
}

// EventBytes returns the size in bytes of the run's committed events as
// encoded on the log, every event counted (deltas too).
func (r *Run) EventBytes() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.logBytes
}

// setState installs a committed state and the events that led to it, which
// take addedBytes on the log.
func (r *Run) setState(s events.RunState, added []events.Envelope, addedBytes int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.state = s
	r.logBytes += addedBytes
	if s.Status.Terminal() {
		r.hist = nil // nobody drives an ended run; its log stays in Kafka
		return
	}
	for _, e := range added {
		if e.Type != events.ItemDelta {
			r.hist = append(r.hist, e)
		}
	}
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
}

// Append appends drafts atomically (all or none) and returns the new state
// once they are committed. Fold errors mean an engine bug and are returned as
// is; ownership errors (the partition moved) mean the engine must stop.
func (r *Run) Append(ctx context.Context, opts AppendOptions, drafts ...events.Draft) (events.RunState, error) {
	req := &appendReq{runID: r.id, drafts: drafts, opts: opts, done: make(chan appendResult, 1)}
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
// accepted, at before_model_request, where each becomes a user_message item.
// It returns stop=true when the run has ended and the engine must return.
func (r *Run) SafePoint(ctx context.Context, sp SafePoint, opts SafePointOptions) (stop bool, err error) {
	st := r.State()
	if st.Status.Terminal() {
		return true, nil
	}
	if p, ok := commands.PendingCancel(st); ok {
		if _, err := r.Append(ctx, AppendOptions{}, commands.CancelEvents(st, p, opts.Unstarted)...); err != nil {
			return false, err
		}
		return true, nil
	}
	var drafts []events.Draft
	switch sp {
	case BeforeRunTerminal:
		drafts = commands.UnneededCompactions(st)
	case BeforeModelRequest:
		drafts = commands.SteerEvents(st)
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
// run resumes. It returns resumed=false when no such command is pending.
func (r *Run) Resume(ctx context.Context, answer func(item events.ItemRef, content string) events.Draft) (resumed bool, err error) {
	st := r.State()
	if st.Status != events.StatusPaused {
		return false, nil
	}
	drafts, ok := commands.ClarificationEvents(st, answer)
	if !ok {
		return false, nil
	}
	if _, err := r.Append(ctx, AppendOptions{}, drafts...); err != nil {
		return false, err
	}
	return true, nil
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
