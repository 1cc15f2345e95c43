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
	id    string
	actor *actor

	mu        sync.Mutex
	state     events.RunState
	stepCtx   context.Context
	interrupt context.CancelFunc
}

// ID returns the run id.
func (r *Run) ID() string { return r.id }

// State returns the committed state of the run.
func (r *Run) State() events.RunState {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.state
}

func (r *Run) setState(s events.RunState) {
	r.mu.Lock()
	r.state = s
	r.mu.Unlock()
}

// Step returns a context for one interruptible step (a model stream, a tool
// call): it is cancelled when a command that must interrupt the run (a
// cancel) is accepted, or when ctx ends.
func (r *Run) Step(ctx context.Context) (context.Context, context.CancelFunc) {
	sctx, cancel := context.WithCancel(ctx)
	r.mu.Lock()
	r.stepCtx, r.interrupt = sctx, cancel
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
	if err := r.actor.submit(ctx, req); err != nil {
		return r.State(), err
	}
	select {
	case res := <-req.done:
		return res.state, res.err
	case <-ctx.Done():
		return r.State(), ctx.Err()
	}
}

// SafePoint applies buffered commands that take effect at point sp. It
// returns stop=true when the run has ended (e.g. a cancel was applied) and
// the engine must return.
func (r *Run) SafePoint(ctx context.Context, _ SafePoint) (stop bool, err error) {
	st := r.State()
	if st.Status.Terminal() {
		return true, nil
	}
	for _, p := range st.Pending {
		if p.Type != string(commands.CancelRun) {
			continue // other intents arrive with later issues; Admit rejects them today
		}
		drafts := closeOpenItems(st, "cancelled", "the run was cancelled")
		if _, err := r.Append(ctx, AppendOptions{}, append(drafts, cancelDrafts(p)...)...); err != nil {
			return false, err
		}
		return true, nil
	}
	return false, nil
}

func cancelDrafts(p events.PendingCommand) []events.Draft {
	var payload commands.CancelRunPayload
	_ = jsonUnmarshal(p.Command, &payload) // validated at admission; a zero reason is fine
	return []events.Draft{
		{Type: events.CommandApplied, CommandID: p.CommandID,
			Payload: events.CommandAppliedPayload{CommandType: p.Type, IdempotencyKey: p.IdempotencyKey}},
		{Type: events.RunCancelled, CommandID: p.CommandID, Payload: events.RunCancelledPayload{Reason: payload.Reason}},
	}
}

// closeOpenItems fails every open item of st, so the run may end.
func closeOpenItems(st events.RunState, code, msg string) []events.Draft {
	var drafts []events.Draft
	for _, it := range st.OpenItems() {
		drafts = append(drafts, events.Draft{Type: events.ItemFailed, ItemID: it.ID,
			Payload: events.ItemFailedPayload{ItemType: it.Type, ErrorCode: code, Message: msg}})
	}
	return drafts
}
