package executor

import (
	"cmp"
	"slices"

	"github.com/xbot-runtime/xbot/events"
)

// Lagging runs. A running run's checkpoint may stay behind its events
// (maxLag); the partition's meta record then says where a new owner reads
// the events topic from to catch up: LagFrom, the earliest offset a lagging
// run needs. The new owner folds every live run's events that follow its
// checkpoint from there (catchUp); a run that does not lag has none.
//
// The meta record is written with every transaction. Executors before
// LagFrom listed every lagging run in it (Lagging), which made the record,
// and its encoding, grow with the partition's running runs: tens of
// kilobytes a transaction with a thousand of them, past Kafka's default
// record size limit (1 MB) with about twenty thousand.

// lag is where a lagging run's uncheckpointed events begin (at or after
// offset From of the events topic) and the seq its checkpoint has.
type lag struct {
	From int64 `json:"from"`
	Seq  int64 `json:"seq"`
}

// lagSet is the partition's lagging runs, and the order they began to lag
// in, which is the order of their From: a run begins to lag at the events'
// end as of its batch, which only grows. Entries of runs that no longer lag
// (or lag again, further on) stay in the order until they reach its front
// or the order is compacted, so the earliest From is found at the front.
// The zero set is empty and ready.
type lagSet struct {
	runs  map[string]lag
	order []lagEntry
}

type lagEntry struct {
	id   string
	from int64
}

// current says whether e is the entry of a run that still lags from there.
func (s *lagSet) current(e lagEntry) bool {
	l, ok := s.runs[e.id]
	return ok && l.From == e.from
}

// lagChanges are a batch's changes to the lagging runs, applied once the
// batch commits.
type lagChanges struct {
	added   map[string]lag  // runs that began to lag
	dropped map[string]bool // runs checkpointed again
	cleared bool            // a base checkpointed every live run
}

func (c *lagChanges) add(id string, l lag) {
	if c.added == nil {
		c.added = map[string]lag{}
	}
	c.added[id] = l
}

func (c *lagChanges) drop(id string) {
	if c.dropped == nil {
		c.dropped = map[string]bool{}
	}
	c.dropped[id] = true
}

// get is run id's lag as the batch leaves it.
func (s *lagSet) get(c *lagChanges, id string) (lag, bool) {
	if c.cleared || c.dropped[id] {
		return lag{}, false
	}
	if l, ok := c.added[id]; ok {
		return l, true
	}
	l, ok := s.runs[id]
	return l, ok
}

// from is the earliest From of a run that lags once c is applied; false
// when none does. It passes over the entries of the runs c changes.
func (s *lagSet) from(c *lagChanges) (int64, bool) {
	if c.cleared {
		return 0, false
	}
	first, found := int64(0), false
	for _, l := range c.added {
		if !found || l.From < first {
			first, found = l.From, true
		}
	}
	for _, e := range s.order {
		if _, again := c.added[e.id]; !again && !c.dropped[e.id] && s.current(e) {
			if found {
				return min(e.from, first), true
			}
			return e.from, true
		}
	}
	return first, found
}

// apply makes c the set's, once its batch committed.
func (s *lagSet) apply(c *lagChanges) {
	if c.cleared {
		clear(s.runs)
		s.order = s.order[:0]
		return
	}
	if s.runs == nil {
		s.runs = map[string]lag{}
	}
	for id := range c.dropped {
		delete(s.runs, id)
	}
	added := make([]lagEntry, 0, len(c.added))
	for id, l := range c.added {
		s.runs[id] = l
		added = append(added, lagEntry{id: id, from: l.From})
	}
	slices.SortFunc(added, func(a, b lagEntry) int { return cmp.Compare(a.from, b.from) })
	s.order = append(s.order, added...)
	for len(s.order) > 0 && !s.current(s.order[0]) {
		s.order = s.order[1:]
	}
	if len(s.order) > 2*len(s.runs)+64 {
		s.order = slices.DeleteFunc(slices.Clone(s.order), func(e lagEntry) bool { return !s.current(e) })
	}
}

// adopt makes runs the set, as a new owner's catch-up found them.
func (s *lagSet) adopt(runs map[string]lag) {
	if runs == nil {
		runs = map[string]lag{}
	}
	s.runs, s.order = runs, s.order[:0]
	for id, l := range runs {
		s.order = append(s.order, lagEntry{id: id, from: l.From})
	}
	slices.SortFunc(s.order, func(a, b lagEntry) int { return cmp.Compare(a.from, b.from) })
}

// legacyLagging is the meta record's lagging field: the lagging runs, as
// executors before LagFrom listed them, or false as later ones write it.
// An executor that knows only the list fails to decode false, and so
// refuses a partition whose lagging runs it could not find, rather than
// take its runs over from checkpoints that miss their latest events.
type legacyLagging map[string]lag

// laggingRefused is what the meta record holds in place of the list.
const laggingRefused = "false"

// MarshalJSON writes laggingRefused, whatever the list holds.
func (legacyLagging) MarshalJSON() ([]byte, error) { return []byte(laggingRefused), nil }

func (l *legacyLagging) UnmarshalJSON(raw []byte) error {
	if string(raw) == laggingRefused || string(raw) == "null" {
		*l = nil
		return nil
	}
	var m map[string]lag
	if err := events.Unmarshal(raw, &m); err != nil {
		return err
	}
	*l = m
	return nil
}
