package executor

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"
)

// TestLagSetFollowsTheLaggingRuns: over random batches (runs that begin to
// lag at the growing end of the events, runs checkpointed again, bases),
// the set's earliest From, before and after each batch commits, and each
// run's lag are those of the runs that lag, and its order stays bounded.
func TestLagSetFollowsTheLaggingRuns(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	s, model := &lagSet{}, map[string]lag{}
	end := int64(0)
	for batch := range 5000 {
		var c lagChanges
		next := maps.Clone(model)
		for range rng.IntN(6) {
			id := fmt.Sprintf("run_%d", rng.IntN(40))
			switch _, ok := next[id]; {
			case rng.IntN(3) == 0:
				c.drop(id)
				delete(c.added, id)
				delete(next, id)
			case !ok:
				c.add(id, lag{From: end, Seq: int64(batch)})
				delete(c.dropped, id)
				next[id] = lag{From: end, Seq: int64(batch)}
			}
		}
		if rng.IntN(50) == 0 {
			c.cleared = true
			clear(next)
		}
		if got, want := fromOf(s.from(&c)), earliest(next); got != want {
			t.Fatalf("batch %d: from %s before the commit, want %s", batch, got, want)
		}
		for id, l := range next {
			if got, ok := s.get(&c, id); !ok || got != l {
				t.Fatalf("batch %d: run %s lags %+v %v, want %+v", batch, id, got, ok, l)
			}
		}
		s.apply(&c)
		model = next
		if got, want := fromOf(s.from(&lagChanges{})), earliest(model); got != want {
			t.Fatalf("batch %d: from %s after the commit, want %s", batch, got, want)
		}
		if len(s.runs) != len(model) || len(s.order) > 2*len(model)+64 {
			t.Fatalf("batch %d: %d runs and %d entries in order, want %d runs", batch, len(s.runs), len(s.order), len(model))
		}
		end += int64(1 + rng.IntN(3))
	}
}

func earliest(m map[string]lag) string {
	first, found := int64(0), false
	for _, l := range m {
		if !found || l.From < first {
			first, found = l.From, true
		}
	}
	return fromOf(first, found)
}

func fromOf(from int64, ok bool) string {
	if !ok {
		return "none"
	}
	return fmt.Sprint(from)
}
