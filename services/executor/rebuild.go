package executor

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/kafka"
)

// Assigned implements kafka.Handler: it restores the partition's runs from
// their checkpoints (from the latest base on) and resumes every run that
// was queued, running or paused with a command waiting. The events topic is
// not read: a run's events are read when an engine drives it, from where
// they begin. A partition without checkpoints (written before they existed)
// is rebuilt once by folding its events, and checkpointed at once.
func (ex *Executor) Assigned(ctx context.Context, part *kafka.Partition, replay func(func(kafka.Record) error) error) error {
	w := newPartitionWorker(ctx, ex, part)
	began := time.Now()
	cfg := ex.cfg.Kafka
	_, cpEnd, err := kafka.Bounds(ctx, cfg, cfg.CheckpointsTopic(), part.ID())
	if err != nil {
		return err
	}
	_, evEnd, err := kafka.Bounds(ctx, cfg, cfg.EventsTopic(), part.ID())
	if err != nil {
		return err
	}
	w.cpEnd, w.eventsEnd = cpEnd, evEnd
	rs, err := ex.restore(ctx, part.ID())
	if err != nil {
		return err
	}
	if rs == nil {
		if rs, err = w.rebuildFromEvents(replay); err != nil {
			return err
		}
	} else {
		part.ResumeAt(rs.meta.NextCommand)
		if err := w.catchUp(ctx, rs); err != nil {
			return err
		}
	}
	w.adopt(rs)
	ex.mu.Lock()
	ex.workers[part.ID()] = w
	ex.mu.Unlock()
	w.resumeAll()
	w.log.Info("partition restored", zap.Int("live_runs", len(w.runs)), zap.Int("finished_runs", len(w.finished)),
		zap.Int("checkpoint_records_read", rs.read), zap.Duration("took", time.Since(began)))
	go w.loop()
	return nil
}

// restore reads partition p's checkpoints from the latest base on; nil
// when the partition has none.
func (ex *Executor) restore(ctx context.Context, p int32) (*restored, error) {
	cfg := ex.cfg.Kafka
	last, found, err := kafka.ReadLast(ctx, cfg, cfg.CheckpointsTopic(), p, func(r kafka.Record) bool { return r.Key == metaKey })
	if err != nil || !found {
		return nil, err
	}
	rs := newRestored()
	if err := rs.add(last); err != nil {
		return nil, fmt.Errorf("meta record of partition %d: %w", p, err)
	}
	from := rs.meta.BaseFrom
	rs = newRestored()
	if _, err := kafka.ReadRange(ctx, cfg, cfg.CheckpointsTopic(), p, from, -1, rs.add); err != nil {
		return nil, fmt.Errorf("checkpoints of partition %d: %w", p, err)
	}
	return rs, nil // forgotten runs still listed get their tombstones with the next base
}

// catchUp folds the events that followed the checkpoints of lagging runs,
// read from the earliest offset one of them needs: the meta record's
// LagFrom, or the least From of the runs an older executor listed. Every
// live run's events past its checkpoint's seq are folded; a run that did
// not lag has none. The runs that had some lag from then on, from their
// first such event (rs.lagging).
func (w *partitionWorker) catchUp(ctx context.Context, rs *restored) error {
	from := int64(-1)
	if rs.meta.LagFrom != nil {
		from = *rs.meta.LagFrom
	}
	for id, l := range rs.meta.Lagging {
		if _, ok := rs.live[id]; ok && (from < 0 || l.From < from) {
			from = l.From
		}
	}
	if from < 0 {
		return nil
	}
	cfg := w.ex.cfg.Kafka
	_, err := kafka.ReadRange(ctx, cfg, cfg.EventsTopic(), w.part.ID(), from, -1, func(rec kafka.Record) error {
		cp, ok := rs.live[rec.Key]
		if !ok {
			return nil
		}
		env, err := events.Decode(rec.Value)
		if err != nil || env.Seq <= cp.State.LastSeq {
			return nil // covered by the checkpoint (an undecodable record is the views' to dead-letter)
		}
		next, err := events.Fold(cp.State, env)
		if err != nil {
			w.log.Error("run log does not fold onto its checkpoint; run quarantined", zap.String("run_id", rec.Key), zap.Error(err))
			delete(rs.live, rec.Key)
			delete(rs.lagging, rec.Key)
			return nil
		}
		if _, ok := rs.lagging[rec.Key]; !ok {
			rs.lagging[rec.Key] = lag{From: rec.Offset, Seq: cp.State.LastSeq}
		}
		cp.State, cp.Bytes = next, cp.Bytes+int64(len(rec.Value))
		rs.live[rec.Key] = cp
		return nil
	})
	if err != nil {
		return fmt.Errorf("events after the checkpoints of partition %d: %w", w.part.ID(), err)
	}
	return nil
}

// adopt installs the restored runs, in the order they joined their key's
// queue: running runs are marked lost (the previous owner may have been
// mid-step) and hold their key, paused runs re-arm their expiry (and hold
// their key when an answer that resumes them was accepted: holdsKey), queued
// runs wait for their sandbox key.
func (w *partitionWorker) adopt(rs *restored) {
	w.nextCmd, w.nextOrder = rs.meta.NextCommand, rs.meta.NextOrder
	w.baseFrom, w.sinceBase = rs.meta.BaseFrom, rs.read
	w.finished = rs.finished
	w.lags.adopt(rs.lagging)
	ids := make([]string, 0, len(rs.live))
	for id := range rs.live {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b string) int {
		return cmp.Or(cmp.Compare(rs.live[a].Order, rs.live[b].Order), cmp.Compare(a, b))
	})
	for _, id := range ids {
		cp := rs.live[id]
		r := w.install(id, cp)
		switch cp.State.Status {
		case events.StatusRunning:
			r.lost = true
			w.hold(r)
		case events.StatusPaused:
			if holdsKey(cp.State) {
				w.hold(r)
			}
			w.armExpiry(cp.State)
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
		st := r.committed()
		if st.Status == events.StatusRunning || st.Status == events.StatusPaused && len(st.Pending) > 0 {
			w.startEngine(r)
			n++
		}
	}
	for k := range w.keys {
		w.schedule(k)
	}
	w.log.Debug("partition resumed", zap.Int("runs", len(w.runs)), zap.Int("resumed", n), zap.Int("sandbox_keys", len(w.keys)))
}
