package executor

import (
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/services/engine/profile"
)

// batch collects one transaction's worth of events. Runs' states are staged
// and become the committed states only after the transaction commits.
type batch struct {
	w         *partitionWorker
	staged    map[string]*events.RunState
	sealed    map[string][]events.Envelope
	sizes     map[string]int64 // encoded bytes of each run's sealed events
	recs      []kafka.OutRecord
	cmdOffset int64
	replies   []*appendReq
	folded    []*Run // runs with appends that did not wait (ahead.go)
	urgent    bool   // something waits for the commit: a command, an append, an expiry
	refused   []refusal
	wake      []string                   // runs whose engine must (re)start: a paused run a command resumes
	enqueue   []string                   // runs accepted by this batch; they start when their sandbox key is free
	started   []string                   // runs accepted and started by this batch (startAtAdmission)
	claimed   []string                   // paused runs resumed by this batch that took their free sandbox key (yield.go)
	profiles  map[string]profile.Profile // the profiles of their snapshots
	keyTaken  map[string]bool            // sandbox keys a run accepted by this batch asked for
	cancels   []string
	now       int64

	// Checkpoints (checkpoint.go).
	cpIdx     map[string]int // index in recs of each run's checkpoint record
	orders    map[string]int64
	histories map[string]*commands.SessionHistory
	nextOrder int64
	meta      partitionMeta
	cpWritten int      // checkpoint records in recs
	forget    []string // finished runs forgotten by this batch's base
	lags      lagChanges
	events    int   // records for the events topic, before the checkpoints
	err       error // a run's checkpoint could not be read: the batch must not commit
}

type refusal struct {
	req *appendReq
	err error
}

func newBatch(w *partitionWorker) *batch {
	return &batch{w: w, staged: map[string]*events.RunState{}, sealed: map[string][]events.Envelope{},
		sizes: map[string]int64{}, cmdOffset: -1, now: time.Now().UnixMilli(),
		cpIdx: map[string]int{}, orders: map[string]int64{}, histories: map[string]*commands.SessionHistory{},
		nextOrder: w.nextOrder, profiles: map[string]profile.Profile{}, keyTaken: map[string]bool{}}
}

func (b *batch) add(m any) {
	if req, ok := m.(*appendReq); !ok || !req.posted && !req.opts.NoWait {
		b.urgent = true
	}
	switch v := m.(type) {
	case commandRecs:
		for _, rec := range v {
			b.admit(rec)
			b.cmdOffset = max(b.cmdOffset, rec.Offset)
		}
	case *appendReq:
		b.appendFor(v)
	case expireReq:
		b.expire(v)
	case positionsReq:
		b.positions(v.key)
	}
}

// state returns the run's staged state, staging the committed one first: a
// live run's, or a finished run's read back from its checkpoint.
func (b *batch) state(runID string) *events.RunState {
	if s, ok := b.staged[runID]; ok {
		return s
	}
	var s events.RunState
	r, ok := b.w.runs[runID]
	if !ok {
		var err error
		if r, err = b.w.loadFinished(runID); err != nil {
			b.err = errors.Join(b.err, err)
		}
	}
	if r != nil {
		s = r.committed()
	}
	b.staged[runID] = &s
	return &s
}

// push folds drafts onto the run's staged state, all or none.
func (b *batch) push(id events.Identity, drafts []events.Draft) error {
	st := b.state(id.RunID)
	next := *st
	envs := make([]events.Envelope, 0, len(drafts))
	hint := 0
	for _, d := range drafts {
		env, err := d.Seal(id, next.LastSeq+1, events.NewID("evt"), b.now)
		if err != nil {
			return err
		}
		// The engine reads the run's items from these envelopes: they keep
		// what the fold decoded (events.SharedPayload).
		if next, env, err = events.FoldShared(next, env); err != nil {
			return err
		}
		envs = append(envs, env)
		hint += env.JSONSizeHint()
	}
	// The records' values share one buffer, each capped at its own end.
	recs := make([]kafka.OutRecord, 0, len(envs))
	buf := make([]byte, 0, hint)
	for _, env := range envs {
		from := len(buf)
		buf = env.AppendJSON(buf)
		recs = append(recs, kafka.OutRecord{Key: id.RunID, Value: buf[from:len(buf):len(buf)]})
	}
	size := int64(len(buf))
	*st = next
	b.sealed[id.RunID] = append(b.sealed[id.RunID], envs...)
	b.sizes[id.RunID] += size
	b.recs = append(b.recs, recs...)
	return nil
}

func (b *batch) appendFor(req *appendReq) {
	if _, live := b.w.runs[req.runID]; !live {
		// Only runs that ended leave the worker; nothing more is appended to them.
		b.refuse(req, ErrRunEnded)
		return
	}
	if err := req.run.asyncErr(); err != nil {
		b.refuse(req, err) // an earlier post of the run was refused
		return
	}
	st := b.state(req.runID)
	switch {
	case st.Status.Terminal():
		b.refuse(req, ErrRunEnded)
		return
	case req.opts.IfNoPending && len(st.Pending) > 0:
		b.refuse(req, ErrPendingCommands)
		return
	}
	id := events.Identity{RunID: st.RunID, TenantID: st.TenantID, PlatformSessionID: st.PlatformSessionID}
	sent, err := b.outRecords(req.opts.Send)
	if err == nil {
		err = b.push(id, req.drafts)
	}
	if err != nil {
		b.w.log.Error("engine append refused by the state machine", zap.String("run_id", req.runID), zap.Error(err))
		b.refuse(req, err)
		return
	}
	b.recs = append(b.recs, sent...)
	if req.posted || req.opts.NoWait {
		b.fold(req)
		return
	}
	b.replies = append(b.replies, req)
}

// commit makes the staged states the committed ones and starts what the
// batch asked for.
func (b *batch) commit() {
	b.w.committedCheckpoints(b)
	free := map[string]bool{}
	for id, st := range b.staged {
		r := b.w.run(id)
		before := r.committed().Status
		b.w.placed(r, b)
		r.setState(*st, b.sealed[id], b.sizes[id])
		switch {
		case st.Status.Terminal() && !before.Terminal():
			b.w.release(*st)
			free[sandboxKey(*st)] = true
			r.interruptStep() // an engine still starting it (Run.Start) stops
		case st.Status == events.StatusPaused && !holdsKey(*st) && b.w.release(*st):
			// It paused for a person: it yields its key (its start may be
			// in this batch too, since a start does not wait).
			free[sandboxKey(*st)] = true
		}
		if st.Status == events.StatusPaused || before == events.StatusPaused {
			b.w.armExpiry(*st)
		}
	}
	for _, id := range b.started {
		// Its key was free at admission; it holds it before any run of
		// this batch that waits for the key is scheduled.
		r := b.w.runs[id]
		b.w.hold(r)
		r.setStartProfile(b.profiles[id])
	}
	for _, id := range b.claimed {
		b.w.hold(b.w.runs[id])
	}
	for _, id := range b.enqueue {
		b.w.enqueue(b.w.runs[id])
		free[sandboxKey(b.w.runs[id].committed())] = true
	}
	for k := range free {
		b.w.schedule(k)
	}
	for _, id := range b.started {
		b.w.startEngine(b.w.runs[id])
	}
	for _, req := range b.replies {
		req.done <- appendResult{state: *b.staged[req.runID]}
	}
	for _, id := range b.wake {
		b.w.startEngine(b.w.runs[id])
	}
	for _, id := range b.cancels {
		b.w.runs[id].interruptStep()
	}
	b.w.evictEnded(b)
}

// finish answers refused requests; they changed nothing.
func (b *batch) finish() {
	for _, r := range b.refused {
		r.req.done <- appendResult{state: r.req.run.State(), err: r.err}
	}
}

func (b *batch) fail(err error) {
	lost := fmt.Errorf("%w: %w", kafka.ErrPartitionLost, err)
	for _, req := range b.replies {
		req.done <- appendResult{err: lost}
	}
	for _, r := range b.folded {
		r.loseAppend(lost)
	}
	b.replies, b.folded = nil, nil
	b.finish()
}
