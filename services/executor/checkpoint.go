package executor

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/kafka"
)

// Checkpoints. Partition p of the checkpoints topic holds what the owner of
// partition p needs of its runs, written in the same transaction as the
// events that change it, so a checkpoint is never ahead of or behind the
// log. It holds three kinds of record:
//
//   - a run's checkpoint, keyed by run id: its state (the fold of its
//     events), where its events begin, its queue position and where its
//     session's earlier runs are. A finished run's checkpoint is the last
//     record of its key; the owner keeps only that record's offset (the
//     finished index) and reads it back when a command names the run.
//   - the partition's meta record (metaKey), the last record of every
//     transaction: the first command not consumed, a lower bound of the next
//     event's offset, where the latest base begins and the next queue
//     position.
//   - the finished index (indexKey(i)), in chunks, written with a base.
//
// A base re-writes every live run's checkpoint and the finished index,
// so that a new owner reads the partition's checkpoints from the latest
// base on: the last meta record says where it begins. The topic is
// compacted; a finished run forgotten after Config.RememberFinished gets a
// tombstone.

const (
	metaKey        = "#partition"
	indexKeyPrefix = "#index/"
	// indexChunk is the finished-index entries per record (~45 bytes each).
	indexChunk = 8192
	// baseMinDefault is the checkpoint records a partition writes between two
	// bases at least; beyond it, a base is due once the records
	// since the last one outnumber twice what a base writes, so a new
	// owner reads at most about three bases' worth.
	baseMinDefault = 2048
)

// baseMin is baseMinDefault; tests lower it.
var baseMin = baseMinDefault

func indexKey(i int) string { return indexKeyPrefix + strconv.Itoa(i) }

// runCheckpoint is a run's checkpoint record.
type runCheckpoint struct {
	State events.RunState `json:"state"`
	// From is an offset of the events topic at or before the run's first
	// event; To is one after (or past) its last event as of this checkpoint.
	From int64 `json:"from"`
	To   int64 `json:"to,omitempty"`
	// Bytes is the encoded size of the run's events on the log.
	Bytes int64 `json:"bytes"`
	// Order is when the run last joined its sandbox key's queue, among the
	// partition's runs: accepted, or resumed from a pause while the key was
	// taken (records of older executors have the acceptance's); the key's
	// queued runs get the key in this order.
	Order int64 `json:"order"`
	// History locates the session's earlier runs; nil when not known (the
	// run names a parent the executor could not locate).
	History *commands.SessionHistory `json:"history,omitempty"`
}

// partitionMeta is the partition's meta record.
type partitionMeta struct {
	// NextCommand is the offset of the first command not consumed.
	NextCommand int64 `json:"nextCommand"`
	// EventsEnd is at or before the offset of the partition's next event.
	EventsEnd int64 `json:"eventsEnd"`
	// BaseFrom is the checkpoint offset from which a new owner reads.
	BaseFrom int64 `json:"baseFrom"`
	// NextOrder is the Order of the next run to join a sandbox key's queue.
	NextOrder int64 `json:"nextOrder"`
	// LagFrom is at or before the first event a running run's checkpoint
	// does not cover, of all such runs (lag.go); nil when none lags.
	LagFrom *int64 `json:"lagFrom,omitempty"`
	// Lagging is how executors before LagFrom listed the lagging runs, each
	// with where its events after its checkpoint begin. It is read, and
	// written as false (legacyLagging).
	Lagging legacyLagging `json:"lagging"`
}

// maxLag is how many events may follow a running run's checkpoint before
// the next append writes a new one. Every event of a run changes its state
// (its seq at least), and the state of a run that has called many tools is
// kilobytes: checkpointing it with every append would write it again for
// each tool call and every few tokens a model streams. What a lagging
// checkpoint misses is on the events topic, after the offset the meta
// record gives, and a new owner folds it (catchUp).
const maxLag = 256

// mayLag says whether the batch may leave run id's checkpoint behind: the
// run was running before the batch and still is, and fewer than maxLag
// events follow its checkpoint. A run is checkpointed when it is accepted,
// starts, pauses, resumes and ends: a queued or paused run may wait for
// days, and its checkpoint must not hold back where a new owner reads from.
func (b *batch) mayLag(id string, st events.RunState) bool {
	r, ok := b.w.runs[id]
	if !ok || st.Status != events.StatusRunning || r.committed().Status != events.StatusRunning {
		return false
	}
	cp := r.committed().LastSeq // not lagging: the committed state is checkpointed
	if l, ok := b.w.lags.get(&b.lags, id); ok {
		cp = l.Seq
	}
	return st.LastSeq-cp < maxLag
}

// isLive says whether a run is one the worker keeps: accepted and not ended.
// The others are finished runs and the logs of commands refused for a run id
// that was never created (run_not_found); both are kept as checkpoints only.
func isLive(st events.RunState) bool { return st.Exists() && !st.Status.Terminal() }

// finishedRef is where a finished run's checkpoint is, and when it ended.
type finishedRef struct {
	offset  int64
	endedAt int64 // ms
}

// summary is the checkpoint of a run that ended: what a later command on it
// needs (its outcome records, status, identity, grants, where its events
// are), without its input.
func summary(st events.RunState) events.RunState {
	st.Input = events.UserInput{}
	st.Pending = nil
	return st
}

func encodeCheckpoint(cp runCheckpoint) ([]byte, error) {
	if !isLive(cp.State) {
		cp.State = summary(cp.State)
	}
	raw, err := json.Marshal(cp)
	if err != nil {
		return nil, fmt.Errorf("encode checkpoint of run %s: %w", cp.State.RunID, err)
	}
	return raw, nil
}

func decodeCheckpoint(raw []byte) (runCheckpoint, error) {
	var cp runCheckpoint
	if err := events.Unmarshal(raw, &cp); err != nil {
		return cp, fmt.Errorf("decode checkpoint: %w", err)
	}
	return cp, nil
}

// encodeIndex writes finished-index entries as lines "runId offset endedAt".
func encodeIndex(ids []string, refs map[string]finishedRef) []byte {
	var b bytes.Buffer
	for _, id := range ids {
		r := refs[id]
		b.WriteString(id)
		b.WriteByte(' ')
		b.WriteString(strconv.FormatInt(r.offset, 10))
		b.WriteByte(' ')
		b.WriteString(strconv.FormatInt(r.endedAt, 10))
		b.WriteByte('\n')
	}
	return b.Bytes()
}

func decodeIndex(raw []byte, fn func(id string, r finishedRef)) error {
	for line := range strings.SplitSeq(strings.TrimSuffix(string(raw), "\n"), "\n") {
		if line == "" {
			continue
		}
		id, rest, ok1 := strings.Cut(line, " ")
		off, ended, ok2 := strings.Cut(rest, " ")
		o, err1 := strconv.ParseInt(off, 10, 64)
		e, err2 := strconv.ParseInt(ended, 10, 64)
		if !ok1 || !ok2 || err1 != nil || err2 != nil {
			return fmt.Errorf("decode finished index: bad line %q", line)
		}
		fn(id, finishedRef{offset: o, endedAt: e})
	}
	return nil
}

// checkpointRec is a record of the checkpoints topic for this partition.
func (w *partitionWorker) checkpointRec(key string, value []byte) kafka.OutRecord {
	return kafka.OutRecord{Topic: w.ex.cfg.Kafka.CheckpointsTopic(), Key: key, Value: value, SamePartition: true}
}

// restored is what a partition's checkpoints say, read from the latest
// base on.
type restored struct {
	meta     partitionMeta
	live     map[string]runCheckpoint
	finished map[string]finishedRef
	lagging  map[string]lag // live runs whose events catchUp folded
	read     int            // records read
}

func newRestored() *restored {
	return &restored{live: map[string]runCheckpoint{}, finished: map[string]finishedRef{}, lagging: map[string]lag{}}
}

// add applies one checkpoint record, in offset order.
func (r *restored) add(rec kafka.Record) error {
	r.read++
	switch {
	case rec.Key == metaKey:
		var m partitionMeta // decoded afresh: a field the record leaves out is not the last record's
		if err := events.Unmarshal(rec.Value, &m); err != nil {
			return err
		}
		r.meta = m
		return nil
	case strings.HasPrefix(rec.Key, indexKeyPrefix):
		return decodeIndex(rec.Value, func(id string, f finishedRef) {
			if _, live := r.live[id]; !live {
				r.finished[id] = f
			}
		})
	case rec.Value == nil: // a forgotten run's tombstone
		delete(r.live, rec.Key)
		delete(r.finished, rec.Key)
		return nil
	}
	cp, err := decodeCheckpoint(rec.Value)
	if err != nil {
		return fmt.Errorf("checkpoint of %s at offset %d: %w", rec.Key, rec.Offset, err)
	}
	if !isLive(cp.State) {
		delete(r.live, rec.Key)
		r.finished[rec.Key] = finishedRef{offset: rec.Offset, endedAt: cp.State.UpdatedAt}
		return nil
	}
	delete(r.finished, rec.Key)
	r.live[rec.Key] = cp
	return nil
}

// checkpoints adds the batch's checkpoint records: one per run with new
// events, a base when one is due, and the meta record last.
func (b *batch) checkpoints() error {
	w := b.w
	start := len(b.recs)
	for _, r := range b.recs {
		if r.Topic == "" {
			b.events++ // counted once: checkpointOf bounds every run's events by it
		}
	}
	for id, evs := range b.sealed {
		if len(evs) == 0 {
			continue
		}
		st := *b.state(id)
		if b.mayLag(id, st) {
			if _, ok := w.lags.get(&b.lags, id); !ok {
				b.lags.add(id, lag{From: w.eventsEnd, Seq: w.runs[id].committed().LastSeq})
			}
			continue
		}
		b.lags.drop(id)
		raw, err := encodeCheckpoint(b.checkpointOf(id, st))
		if err != nil {
			return err
		}
		b.cpIdx[id] = len(b.recs)
		b.recs = append(b.recs, w.checkpointRec(id, raw))
	}
	meta := partitionMeta{NextCommand: w.nextCmd, EventsEnd: w.eventsEnd, BaseFrom: w.baseFrom, NextOrder: b.nextOrder}
	if b.cmdOffset >= 0 {
		meta.NextCommand = max(meta.NextCommand, b.cmdOffset+1)
	}
	written := len(b.recs) - start + 1
	if w.sinceBase+written >= max(baseMin, 2*w.baseSize()) {
		n, err := b.base()
		if err != nil {
			return err
		}
		meta.BaseFrom, written = w.cpEnd, n+written
		b.lags.cleared = true // the base wrote every live run's checkpoint
	}
	if from, ok := w.lags.from(&b.lags); ok {
		meta.LagFrom = &from
	}
	raw, err := jsonMeta(meta)
	if err != nil {
		return err
	}
	b.recs = append(b.recs, w.checkpointRec(metaKey, raw))
	b.meta, b.cpWritten = meta, written
	return nil
}

// checkpointOf is run id's checkpoint with state st, as this batch leaves it.
func (b *batch) checkpointOf(id string, st events.RunState) runCheckpoint {
	// This batch's events go after the previous transaction's marker, one
	// after another: none is at or past eventsEnd + 1 + their count.
	cp := runCheckpoint{State: st, From: b.w.eventsEnd, To: b.w.eventsEnd + 1 + int64(b.events), Order: -1}
	if r, ok := b.w.runs[id]; ok {
		r.mu.Lock()
		cp.Bytes, cp.History = r.logBytes, r.history
		if r.from >= 0 {
			cp.From = r.from
		}
		if _, appended := b.sealed[id]; !appended {
			cp.To = r.to // a base's copy of a run this batch did not touch
		}
		cp.Order = r.order
		r.mu.Unlock()
	}
	cp.Bytes += b.sizes[id]
	if o, ok := b.orders[id]; ok {
		cp.Order = o
	}
	if h, ok := b.histories[id]; ok {
		cp.History = h
	}
	return cp
}

// baseSize is about the records a base writes now.
func (w *partitionWorker) baseSize() int {
	return len(w.runs) + len(w.finished)/indexChunk + 1
}

// base adds the checkpoint of every live run and the finished index
// (forgetting runs that ended longer than RememberFinished ago: their
// checkpoints get tombstones). It returns the records it added.
func (b *batch) base() (int, error) {
	w := b.w
	n := 0
	for id, r := range w.runs {
		if _, ok := b.cpIdx[id]; ok {
			continue // written above
		}
		st := r.committed()
		if s, ok := b.staged[id]; ok {
			st = *s // a lagging run this batch appended deltas to
		}
		if !isLive(st) {
			continue
		}
		raw, err := encodeCheckpoint(b.checkpointOf(id, st))
		if err != nil {
			return 0, err
		}
		b.recs = append(b.recs, w.checkpointRec(id, raw))
		n++
	}
	horizon := b.now - w.ex.cfg.RememberFinished.Milliseconds()
	var ids []string
	for id, f := range w.finished {
		if _, ok := b.sealed[id]; ok {
			continue // its new checkpoint is above, at an offset known after the commit
		}
		if f.endedAt < horizon {
			b.forget = append(b.forget, id)
			b.recs = append(b.recs, w.checkpointRec(id, nil))
			n++
			continue
		}
		ids = append(ids, id)
	}
	for i := 0; i*indexChunk < len(ids) || i == 0; i++ {
		chunk := ids[i*indexChunk : min(len(ids), (i+1)*indexChunk)]
		b.recs = append(b.recs, w.checkpointRec(indexKey(i), encodeIndex(chunk, w.finished)))
		n++
	}
	return n, nil
}

// loadFinished reads back the checkpoint of a run that is not live, for a
// batch that names it. It returns nil, nil for a run it does not know.
func (w *partitionWorker) loadFinished(id string) (*Run, error) {
	if r, ok := w.recent[id]; ok {
		w.runs[id] = r
		delete(w.recent, id)
		return r, nil
	}
	f, ok := w.finished[id]
	if !ok || f.endedAt < time.Now().Add(-w.ex.cfg.RememberFinished).UnixMilli() {
		return nil, nil // never known, or forgotten
	}
	rec, found, err := kafka.ReadAt(w.ctx, w.ex.cfg.Kafka, w.ex.cfg.Kafka.CheckpointsTopic(), w.part.ID(), f.offset)
	if err != nil {
		return nil, fmt.Errorf("read the checkpoint of finished run %s: %w", id, err)
	}
	if !found || rec.Key != id || rec.Value == nil {
		return nil, fmt.Errorf("the checkpoint of finished run %s is not at offset %d of %s", id, f.offset, w.ex.cfg.Kafka.CheckpointsTopic())
	}
	cp, err := decodeCheckpoint(rec.Value)
	if err != nil {
		return nil, fmt.Errorf("finished run %s: %w", id, err)
	}
	r := w.install(id, cp)
	return r, nil
}

// install makes a run of a checkpoint one of the worker's; its events are
// read when an engine drives it.
func (w *partitionWorker) install(id string, cp runCheckpoint) *Run {
	r := &Run{id: id, worker: w, state: cp.State, logBytes: cp.Bytes, from: cp.From, to: cp.To, order: cp.Order, history: cp.History}
	w.runs[id] = r
	return r
}

// placed records, before a staged state is installed, where a run's events
// begin, its queue position and its session history, for its next
// checkpoints.
func (w *partitionWorker) placed(r *Run, b *batch) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.from < 0 {
		r.from = b.meta.EventsEnd
	}
	if len(b.sealed[r.id]) > 0 {
		r.to = max(r.to, b.w.eventsEnd) // committedCheckpoints moved it past this batch
	}
	if o, ok := b.orders[r.id]; ok {
		r.order = o
	}
	if h, ok := b.histories[r.id]; ok {
		r.history = h
	}
}

// committedCheckpoints advances the worker's checkpoint bookkeeping after b
// committed.
func (w *partitionWorker) committedCheckpoints(b *batch) {
	w.nextCmd, w.nextOrder = b.meta.NextCommand, b.nextOrder
	if b.meta.BaseFrom != w.baseFrom {
		w.baseFrom, w.sinceBase = b.meta.BaseFrom, 0
	}
	w.sinceBase += b.cpWritten
	w.lags.apply(&b.lags)
	for _, id := range b.forget {
		delete(w.finished, id)
	}
	if e := w.part.End(w.ex.cfg.Kafka.EventsTopic()); e > w.eventsEnd {
		w.eventsEnd = e
	}
	if e := w.part.End(w.ex.cfg.Kafka.CheckpointsTopic()); e > w.cpEnd {
		w.cpEnd = e
	}
}

// evictEnded removes the runs b ended (or read back) from memory: what is
// left of them is their checkpoint, found through the finished index.
func (w *partitionWorker) evictEnded(b *batch) {
	for id, st := range b.staged {
		if isLive(*st) {
			delete(w.finished, id)
			continue
		}
		if i, ok := b.cpIdx[id]; ok {
			w.finished[id] = finishedRef{offset: b.recs[i].Offset, endedAt: st.UpdatedAt}
		}
		if _, ok := w.finished[id]; ok || st.LastSeq == 0 {
			w.keepRecent(w.runs[id])
			delete(w.runs, id)
		}
	}
}

// recentCap bounds the finished runs kept in memory after a batch read or
// ended them: commands on a run that just ended (a client's retries, a
// follow-up) find it without a read.
const recentCap = 256

func (w *partitionWorker) keepRecent(r *Run) {
	if r == nil || r.committed().LastSeq == 0 {
		return
	}
	if _, ok := w.recent[r.id]; !ok {
		w.recentOrder = append(w.recentOrder, r.id)
	}
	w.recent[r.id] = r
	for len(w.recent) > recentCap && len(w.recentOrder) > 0 {
		delete(w.recent, w.recentOrder[0])
		w.recentOrder = w.recentOrder[1:]
	}
	if len(w.recentOrder) > 4*recentCap { // ids loaded back since: compact the order
		w.recentOrder = slices.DeleteFunc(w.recentOrder, func(id string) bool { _, ok := w.recent[id]; return !ok })
	}
}

// jsonMeta encodes m; its lagging field is written false (legacyLagging).
func jsonMeta(m partitionMeta) ([]byte, error) {
	raw, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encode partition meta: %w", err)
	}
	return raw, nil
}
