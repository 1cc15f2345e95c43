package executor

import (
	"fmt"
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/kafka"
)

// A partition whose log was written before checkpoints existed has events
// and no meta record. Its first owner folds its events once, from offset 0,
// as every owner did before, and writes the checkpoints of its runs; from
// then on owners read those.

// migrateBatch bounds the checkpoint records of one migration transaction.
const migrateBatch = 512

// rebuildFromEvents folds the partition's committed events into run states
// and checkpoints them.
func (w *partitionWorker) rebuildFromEvents(replay func(func(kafka.Record) error) error) (*restored, error) {
	began := time.Now()
	f := newFolded(w.log)
	if err := replay(f.add); err != nil {
		return nil, err
	}
	rs := newRestored()
	horizon := time.Now().Add(-w.ex.cfg.RememberFinished).UnixMilli()
	var order int64
	for _, id := range f.order {
		if f.broken[id] {
			continue
		}
		st := f.states[id]
		cp := runCheckpoint{State: st, From: f.first[id], To: f.last[id] + 1, Bytes: f.sizes[id], Order: order}
		order++
		if isLive(st) {
			rs.live[id] = cp
		} else if st.UpdatedAt >= horizon {
			rs.finished[id] = finishedRef{endedAt: st.UpdatedAt, offset: -1}
			f.ended[id] = cp
		}
	}
	// Logs of commands refused for runs never created.
	for id, st := range f.states {
		if _, ok := rs.live[id]; ok || f.broken[id] || st.Exists() {
			continue
		}
		rs.finished[id] = finishedRef{endedAt: st.UpdatedAt, offset: -1}
		f.ended[id] = runCheckpoint{State: st, From: f.first[id], To: f.last[id] + 1, Bytes: f.sizes[id], Order: -1}
	}
	rs.meta = partitionMeta{NextCommand: max(w.part.ResumeOffset(), 0), EventsEnd: w.eventsEnd, BaseFrom: w.cpEnd, NextOrder: order}
	if len(f.states) == 0 {
		return rs, nil // an empty partition: its first batch writes the first checkpoint
	}
	if err := w.migrate(rs, f.ended); err != nil {
		return nil, err
	}
	w.log.Info("partition without checkpoints rebuilt from its events and checkpointed",
		zap.Int("runs", len(f.states)), zap.Int("live_runs", len(rs.live)), zap.Duration("took", time.Since(began)))
	return rs, nil
}

// migrate writes the checkpoints of a rebuilt partition: the finished runs'
// first, then the live runs' and the meta record, in transactions of
// migrateBatch records; the meta record points at the first, so a crash
// half-way leaves no meta record behind and the next owner starts over.
func (w *partitionWorker) migrate(rs *restored, ended map[string]runCheckpoint) error {
	var recs []kafka.OutRecord
	var ids []string
	flush := func(last bool) error {
		if last {
			raw, err := jsonMeta(rs.meta)
			if err != nil {
				return err
			}
			recs = append(recs, w.checkpointRec(metaKey, raw))
		}
		if len(recs) == 0 {
			return nil
		}
		if err := w.part.Append(w.ctx, recs, -1); err != nil {
			return fmt.Errorf("write the checkpoints of a partition without them: %w", err)
		}
		for i, id := range ids {
			if f, ok := rs.finished[id]; ok {
				f.offset = recs[i].Offset
				rs.finished[id] = f
			}
		}
		recs, ids = recs[:0], ids[:0]
		return nil
	}
	add := func(id string, cp runCheckpoint) error {
		raw, err := encodeCheckpoint(cp)
		if err != nil {
			return err
		}
		recs, ids = append(recs, w.checkpointRec(id, raw)), append(ids, id)
		rs.read++
		if len(recs) >= migrateBatch {
			return flush(false)
		}
		return nil
	}
	for id, cp := range ended {
		if err := add(id, cp); err != nil {
			return err
		}
	}
	for id, cp := range rs.live {
		if err := add(id, cp); err != nil {
			return err
		}
	}
	if err := flush(true); err != nil {
		return err
	}
	w.cpEnd = w.part.End(w.ex.cfg.Kafka.CheckpointsTopic())
	return nil
}

// folded is what a partition's committed events say about its runs.
type folded struct {
	log    *zap.Logger
	broken map[string]bool // runs whose log does not fold: quarantined
	states map[string]events.RunState
	sizes  map[string]int64 // encoded bytes of each run's events
	first  map[string]int64 // offset of each run's first event
	last   map[string]int64 // and of its last
	order  []string         // runs in the order they joined their key's queue: each sandbox key's FIFO
	ended  map[string]runCheckpoint
}

func newFolded(log *zap.Logger) *folded {
	return &folded{log: log, broken: map[string]bool{}, states: map[string]events.RunState{},
		sizes: map[string]int64{}, first: map[string]int64{}, last: map[string]int64{}, ended: map[string]runCheckpoint{}}
}

// add folds one committed record. A record that does not decode is
// skipped; a run whose log does not fold is quarantined. Neither stops the
// rebuild.
func (p *folded) add(rec kafka.Record) error {
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
	if _, ok := p.first[env.RunID]; !ok {
		p.first[env.RunID] = rec.Offset
	}
	requeued := next.Requeued && !p.states[env.RunID].Requeued
	p.states[env.RunID] = next
	p.last[env.RunID] = rec.Offset
	switch {
	case env.Type == events.RunAccepted:
		p.order = append(p.order, env.RunID)
	case requeued: // resumed while its key was taken: it joined the key's queue again
		p.order = append(slices.DeleteFunc(p.order, func(id string) bool { return id == env.RunID }), env.RunID)
	}
	p.sizes[env.RunID] += int64(len(rec.Value))
	return nil
}
