package executor

import (
	"slices"
	"testing"

	"github.com/xbot-runtime/xbot/events"
)

// TestEventsAheadAreNotCopied: a fold appends what the batch sealed since
// the one before, deltas left out, after the committed events and in their
// array's spare capacity; the commit takes them as the committed events.
// Nothing is copied, views handed out earlier keep what they showed, and
// events loaded between two folds are built on.
func TestEventsAheadAreNotCopied(t *testing.T) {
	t.Parallel()
	ev := func(seq int64, typ events.Type) events.Envelope { return events.Envelope{Seq: seq, Type: typ} }
	seqs := func(evs []events.Envelope) []int64 {
		out := make([]int64, len(evs))
		for i, e := range evs {
			out[i] = e.Seq
		}
		return out
	}
	hist := append(make([]events.Envelope, 0, 16), ev(1, events.RunAccepted), ev(2, events.RunStarted))
	r := &Run{id: "r", loaded: true, hist: hist}
	b := &batch{staged: map[string]*events.RunState{"r": {}}, sealed: map[string][]events.Envelope{}, sizes: map[string]int64{}}
	fold := func(e events.Envelope) []events.Envelope {
		b.sealed["r"] = append(b.sealed["r"], e)
		b.fold(&appendReq{run: r, runID: "r", posted: true, done: make(chan appendResult, 1)})
		return r.Events()
	}

	v1 := fold(ev(3, events.ItemStarted))
	v2 := fold(ev(4, events.ItemDelta))
	v3 := fold(ev(5, events.ItemCompleted))
	for _, c := range []struct {
		name string
		got  []events.Envelope
		want []int64
	}{{"after the start", v1, []int64{1, 2, 3}}, {"after a delta", v2, []int64{1, 2, 3}},
		{"after the completion", v3, []int64{1, 2, 3, 5}}, {"the committed events", r.hist, []int64{1, 2}}} {
		if !slices.Equal(seqs(c.got), c.want) {
			t.Errorf("%s: seqs %v, want %v", c.name, seqs(c.got), c.want)
		}
	}
	if &v1[0] != &hist[0] || &v2[0] != &hist[0] || &v3[0] != &hist[0] {
		t.Error("a fold copied the run's events")
	}
	r.setState(events.RunState{}, b.sealed["r"], 0)
	if got := r.Events(); !slices.Equal(seqs(got), []int64{1, 2, 3, 5}) || &got[0] != &hist[0] {
		t.Errorf("committed: seqs %v (copied: %v), want 1 2 3 5 in place", seqs(got), &got[0] != &hist[0])
	}
	if !slices.Equal(seqs(v1), []int64{1, 2, 3}) || !slices.Equal(seqs(v3), []int64{1, 2, 3, 5}) {
		t.Errorf("views after the commit: %v and %v", seqs(v1), seqs(v3))
	}
	b = &batch{staged: map[string]*events.RunState{"r": {}}, sealed: map[string][]events.Envelope{}, sizes: map[string]int64{}}
	if v := fold(ev(6, events.ItemStarted)); !slices.Equal(seqs(v), []int64{1, 2, 3, 5, 6}) || !slices.Equal(seqs(v3), []int64{1, 2, 3, 5}) {
		t.Errorf("the next batch: seqs %v, the view before it %v", seqs(v), seqs(v3))
	}

	// A batch whose first fold found the events not loaded; the engine
	// loads them before the next.
	r = &Run{id: "r"}
	b = &batch{staged: map[string]*events.RunState{"r": {}}, sealed: map[string][]events.Envelope{}, sizes: map[string]int64{}}
	if v := fold(ev(3, events.ItemStarted)); v != nil {
		t.Fatalf("events of a run not loaded: %v", seqs(v))
	}
	r.mu.Lock()
	r.hist, r.loaded = hist[:2:2], true // as loaded: capacity cut, the first append copies
	r.mu.Unlock()
	if v := fold(ev(4, events.ItemCompleted)); !slices.Equal(seqs(v), []int64{1, 2, 3, 4}) {
		t.Errorf("loaded between two folds: seqs %v, want 1 2 3 4", seqs(v))
	}
}
