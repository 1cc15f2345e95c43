package uistream

import (
	"bytes"
	"sync"

	"github.com/xbot-runtime/xbot/events"
)

// retained keeps the most recent records the hub delivered, up to a byte
// budget, oldest out first, indexed by run. It keeps them undecoded: a
// record is decoded only when a stream asks for its run.
type retained struct {
	mu    sync.Mutex
	max   int
	bytes int
	fifo  []*Record // oldest first, from head on
	head  int
	byRun map[string][]*Record // each run's retained records, oldest first
}

func newRetained(maxBytes int) retained {
	return retained{max: maxBytes, byRun: map[string][]*Record{}}
}

func (t *retained) add(recs []*Record) {
	if t.max == 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, r := range recs {
		// A fetched value is a slice of its whole fetch buffer: a copy keeps
		// only its own bytes alive. Nobody reads r yet (add runs first).
		r.Value = bytes.Clone(r.Value)
		id := r.RunID()
		t.byRun[id] = append(t.byRun[id], r)
		t.fifo = append(t.fifo, r)
		t.bytes += r.size()
	}
	for t.bytes > t.max && t.head < len(t.fifo) {
		t.evict()
	}
	if t.head > len(t.fifo)/2 { // reuse the front of the slice
		n := copy(t.fifo, t.fifo[t.head:])
		clear(t.fifo[n:])
		t.fifo, t.head = t.fifo[:n], 0
	}
}

// evict drops the oldest record, which is also the oldest of its run.
func (t *retained) evict() {
	r := t.fifo[t.head]
	t.fifo[t.head] = nil
	t.head++
	t.bytes -= r.size()
	id := r.RunID()
	if rs := t.byRun[id]; len(rs) > 1 {
		rs[0] = nil
		t.byRun[id] = rs[1:]
	} else {
		delete(t.byRun, id)
	}
}

// run returns a copy of runID's retained records.
func (t *retained) run(runID string) []*Record {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]*Record(nil), t.byRun[runID]...)
}

func (t *retained) lastSeq(runID string) int64 {
	t.mu.Lock()
	rs := t.byRun[runID]
	var last *Record
	if len(rs) > 0 {
		last = rs[len(rs)-1]
	}
	t.mu.Unlock()
	if last == nil {
		return 0
	}
	h, err := last.Head()
	if err != nil {
		return 0
	}
	return h.Seq
}

// events decodes runID's retained events of tenantID after afterSeq.
func (t *retained) events(tenantID, runID string, afterSeq int64) []*events.Envelope {
	var out []*events.Envelope
	for _, r := range t.run(runID) {
		h, err := r.Head()
		if err != nil || h.Seq <= afterSeq || h.TenantID != tenantID || h.RunID != runID {
			continue
		}
		e, err := r.Envelope()
		if err != nil {
			continue
		}
		out = append(out, e)
	}
	return out
}

// seen reports whether a retained record shows that run runID of tenantID
// exists.
func (t *retained) seen(tenantID, runID string) bool {
	for _, r := range t.run(runID) {
		if h, err := r.Head(); err == nil && h.TenantID == tenantID && h.RunID == runID && showsRun(h) {
			return true
		}
	}
	return false
}
