package runner

import (
	"context"
	"sync"
)

// batcher groups the records handled concurrently (one in flight per
// partition) into one Apply, so a view writes many runs per transaction.
// A batch that fails as a whole is split: each record is applied on its own,
// so one poison record cannot hold back the records of other runs.
type batcher struct {
	p   Projector
	max int

	mu      sync.Mutex
	pending []*job
	busy    bool
}

type job struct {
	ctx  context.Context
	rec  Record
	done chan error
}

func newBatcher(p Projector, max int) *batcher { return &batcher{p: p, max: max} }

// apply applies rec, together with whatever else is waiting, and returns
// rec's outcome.
func (b *batcher) apply(ctx context.Context, rec Record) error {
	j := &job{ctx: ctx, rec: rec, done: make(chan error, 1)}
	b.mu.Lock()
	b.pending = append(b.pending, j)
	lead := !b.busy
	b.busy = true
	b.mu.Unlock()
	if lead {
		b.drain()
	}
	return <-j.done
}

// drain applies batches until nothing is pending; one goroutine at a time.
func (b *batcher) drain() {
	for {
		b.mu.Lock()
		n := min(len(b.pending), b.max)
		jobs := b.pending[:n:n]
		b.pending = b.pending[n:]
		if n == 0 {
			b.busy = false
			b.mu.Unlock()
			return
		}
		b.mu.Unlock()
		b.run(jobs)
	}
}

func (b *batcher) run(jobs []*job) {
	recs := make([]Record, len(jobs))
	for i, j := range jobs {
		recs[i] = j.rec
	}
	err := b.p.Apply(jobs[0].ctx, recs)
	if err == nil || len(jobs) == 1 {
		for _, j := range jobs {
			j.done <- err
		}
		return
	}
	for _, j := range jobs {
		j.done <- b.p.Apply(j.ctx, []Record{j.rec})
	}
}
