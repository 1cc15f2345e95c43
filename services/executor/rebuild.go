package executor

import (
	"context"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/kafka"
)

// Assigned implements kafka.Handler: it folds the partition's committed
// events into run states, then resumes every run that was queued or running.
func (ex *Executor) Assigned(ctx context.Context, part *kafka.Partition, replay func(func(kafka.Record) error) error) error {
	w := newPartitionWorker(ctx, ex, part)
	rp := newReplayed(w.log)
	if err := replay(rp.add); err != nil {
		return err
	}
	w.adopt(rp)
	ex.mu.Lock()
	ex.workers[part.ID()] = w
	ex.mu.Unlock()
	w.resumeAll()
	go w.loop()
	return nil
}

// replayed is what a partition's committed events say about its runs.
type replayed struct {
	log    *zap.Logger
	broken map[string]bool // runs whose log does not fold: quarantined
	states map[string]events.RunState
	logs   map[string][]events.Envelope // what Run.Events holds, for active runs
	sizes  map[string]int64             // encoded bytes of each run's events
	order  []string                     // runs in the order they were accepted: each sandbox key's FIFO
}

func newReplayed(log *zap.Logger) *replayed {
	return &replayed{log: log, broken: map[string]bool{}, states: map[string]events.RunState{},
		logs: map[string][]events.Envelope{}, sizes: map[string]int64{}}
}

// add folds one committed record. A record that does not decode is
// skipped; a run whose log does not fold is quarantined. Neither stops the
// rebuild.
func (p *replayed) add(rec kafka.Record) error {
	env, err := events.Decode(rec.Value)
	if err != nil {
		p.log.Error("undecodable event in the log; skipped", zap.Int64("offset", rec.Offset), zap.Error(err))
		return nil
	}
	if p.broken[env.RunID] {
		return nil
	}
	next, err := events.Fold(p.states[env.RunID], env)
	if err != nil {
		// The run's log breaks the protocol; driving it on would compound
		// the damage. Leave it alone and say so.
		p.log.Error("run log does not fold; run quarantined", zap.String("run_id", env.RunID), zap.Error(err))
		p.broken[env.RunID] = true
		return nil
	}
	p.states[env.RunID] = next
	if env.Type == events.RunAccepted {
		p.order = append(p.order, env.RunID)
	}
	p.sizes[env.RunID] += int64(len(rec.Value))
	switch {
	case next.Status.Terminal():
		delete(p.logs, env.RunID) // ended runs are not driven; free their events
	case env.Type != events.ItemDelta: // what Run.Events holds
		p.logs[env.RunID] = append(p.logs[env.RunID], env)
	}
	return nil
}

// adopt installs the replayed runs, in the order they were accepted: running
// runs are marked lost (the previous owner may have been mid-step), paused
// runs re-arm their expiry, queued runs wait for their sandbox key.
func (w *partitionWorker) adopt(p *replayed) {
	for _, id := range p.order {
		st := p.states[id]
		if p.broken[id] {
			continue
		}
		r := w.run(id)
		r.setState(st, p.logs[id], p.sizes[id])
		switch st.Status {
		case events.StatusRunning:
			r.lost = true
			w.hold(r)
		case events.StatusPaused:
			w.hold(r)
			w.armExpiry(st)
		case events.StatusQueued:
			w.enqueue(r)
		default:
		}
	}
}

// resumeAll drives what was in flight when the partition changed hands: runs
// that were running, paused runs with a pending command that may resume them,
// and the next queued run of every free sandbox key.
func (w *partitionWorker) resumeAll() {
	n := 0
	for _, r := range w.runs {
		st := r.State()
		if st.Status == events.StatusRunning || st.Status == events.StatusPaused && len(st.Pending) > 0 {
			w.startEngine(r)
			n++
		}
	}
	for k := range w.keys {
		w.schedule(k)
	}
	w.log.Debug("partition rebuilt", zap.Int("runs", len(w.runs)), zap.Int("resumed", n), zap.Int("sandbox_keys", len(w.keys)))
}
