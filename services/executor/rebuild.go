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
	broken := map[string]bool{}
	states := map[string]events.RunState{}
	logs := map[string][]events.Envelope{}
	sizes := map[string]int64{} // encoded bytes of each run's events
	var order []string          // runs in the order they were accepted: each sandbox key's FIFO
	err := replay(func(rec kafka.Record) error {
		env, err := events.Decode(rec.Value)
		if err != nil {
			w.log.Error("undecodable event in the log; skipped", zap.Int64("offset", rec.Offset), zap.Error(err))
			return nil
		}
		if broken[env.RunID] {
			return nil
		}
		next, err := events.Fold(states[env.RunID], env)
		if err != nil {
			// The run's log breaks the protocol; driving it on would compound
			// the damage. Leave it alone and say so.
			w.log.Error("run log does not fold; run quarantined", zap.String("run_id", env.RunID), zap.Error(err))
			broken[env.RunID] = true
			return nil
		}
		states[env.RunID] = next
		if env.Type == events.RunAccepted {
			order = append(order, env.RunID)
		}
		sizes[env.RunID] += int64(len(rec.Value))
		switch {
		case next.Status.Terminal():
			delete(logs, env.RunID) // ended runs are not driven; free their events
		case env.Type != events.ItemDelta: // what Run.Events holds
			logs[env.RunID] = append(logs[env.RunID], env)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, id := range order {
		st := states[id]
		if broken[id] {
			continue
		}
		r := w.run(id)
		r.setState(st, logs[id], sizes[id])
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
	ex.mu.Lock()
	ex.workers[part.ID()] = w
	ex.mu.Unlock()
	w.resumeAll()
	go w.loop()
	return nil
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
