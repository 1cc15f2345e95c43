package runner

import (
	"context"
	"sync"
)

// batcher groups records into one Apply, so a view writes many runs per
// transaction. The subscriber pipelines deliveries (many messages of a
// partition in flight) and the router hands each to its own goroutine, so
// records may reach the batcher out of order: each carries the offset of the
// record delivered before it (prev), and a record is applied only right after
// that one. A batch that fails is split: the records are applied one by one,
// so one poison record cannot hold back the records of other runs.
type batcher struct {
	p       Projector
	max     int
	stopped func(runID string) (int64, bool)
	stop    func(runID string, seq int64)

	mu      sync.Mutex
	pending map[int32][]*job // per partition, in arrival order
	applied map[int32]int64  // per partition, the last offset handled
	busy    bool
}

type job struct {
	ctx  context.Context
	rec  Record
	prev int64 // -1: first of a delivery sequence
	bad  *PoisonError
	done chan error
}

func newBatcher(p Projector, maxBatch int, stopped func(string) (int64, bool), stop func(string, int64)) *batcher {
	return &batcher{p: p, max: maxBatch, stopped: stopped, stop: stop, pending: map[int32][]*job{}, applied: map[int32]int64{}}
}

// apply applies rec (after the record at prev), together with whatever else
// is ready, and returns rec's outcome. A record already known to be poison
// (bad) is not applied but still takes its turn, so the records after it
// are not held up.
func (b *batcher) apply(ctx context.Context, rec Record, prev int64, bad *PoisonError) error {
	j := &job{ctx: ctx, rec: rec, prev: prev, bad: bad, done: make(chan error, 1)}
	b.mu.Lock()
	b.pending[rec.Partition] = append(b.pending[rec.Partition], j)
	lead := !b.busy
	b.busy = true
	b.mu.Unlock()
	if lead {
		b.drain()
	}
	select {
	case err := <-j.done:
		return err
	case <-ctx.Done():
		b.mu.Lock()
		b.remove(j)
		b.mu.Unlock()
		select {
		case err := <-j.done: // finished meanwhile
			return err
		default:
			return ctx.Err()
		}
	}
}

func (b *batcher) remove(j *job) {
	q := b.pending[j.rec.Partition]
	for i, x := range q {
		if x == j {
			b.pending[j.rec.Partition] = append(q[:i:i], q[i+1:]...)
			return
		}
	}
}

// drain applies ready records until none is ready; one goroutine at a time.
func (b *batcher) drain() {
	for {
		b.mu.Lock()
		chains := b.ready()
		if len(chains) == 0 {
			b.busy = false
			b.mu.Unlock()
			return
		}
		b.mu.Unlock()
		b.run(chains)
	}
}

// ready takes, per partition, the chain of records that follow the last one
// handled, up to max records in all. Called with mu held.
func (b *batcher) ready() [][]*job {
	var chains [][]*job
	n := 0
	for p, q := range b.pending {
		var chain []*job
		last, known := b.applied[p]
		for n < b.max {
			i := -1
			for k, j := range q {
				if j.ctx.Err() != nil {
					continue
				}
				if j.prev == -1 || (known && j.prev == last) {
					i = k
					break
				}
			}
			if i < 0 {
				break
			}
			j := q[i]
			q = append(q[:i:i], q[i+1:]...)
			chain = append(chain, j)
			last, known = j.rec.Offset, true
			n++
		}
		b.pending[p] = q
		if len(chain) > 0 {
			chains = append(chains, chain)
		}
	}
	return chains
}

// run applies the chains as one batch, or record by record when the batch
// fails. Records that are poison before any Apply (undecodable, or of a run
// whose projection stopped) are answered first and left out.
func (b *batcher) run(chains [][]*job) {
	var recs []Record
	var applied [][]*job
	for _, c := range chains {
		var kept []*job
		for _, j := range c {
			if pe := b.poisonBefore(j); pe != nil {
				j.done <- pe
				continue
			}
			kept = append(kept, j)
			recs = append(recs, j.rec)
		}
		b.handled(c[len(c)-1])
		if len(kept) > 0 {
			applied = append(applied, kept)
		}
	}
	if len(recs) == 0 {
		return
	}
	if err := b.p.Apply(applied[0][0].ctx, recs); err == nil {
		for _, c := range applied {
			for _, j := range c {
				j.done <- nil
			}
		}
		return
	}
	for _, c := range applied {
		b.runOneByOne(c)
	}
}

// poisonBefore returns why j is poison without applying it, or nil.
func (b *batcher) poisonBefore(j *job) *PoisonError {
	if j.bad != nil {
		b.stop(j.bad.RunID, j.bad.Seq)
		return j.bad
	}
	if at, ok := b.stopped(j.rec.Event.RunID); ok {
		return Poison(j.rec, stoppedReason(at))
	}
	return nil
}

// runOneByOne applies a partition's chain in order. A record that fails for
// a transient reason fails the rest of the chain too (they are retried after
// it, never before); a poison record is dead-lettered and later records of
// its run are poison as well.
func (b *batcher) runOneByOne(chain []*job) {
	for k, j := range chain {
		var err error
		if pe := b.poisonBefore(j); pe != nil {
			err = pe
		} else {
			err = b.p.Apply(j.ctx, []Record{j.rec})
		}
		if pe, poison := IsPoison(err); err == nil || poison {
			if poison {
				b.stop(pe.RunID, pe.Seq) // before the chain's next record: it may be of the same run
			}
			j.done <- err
			continue
		}
		// The rest of the chain goes back to its place: not handled.
		b.unhandle(chain[k])
		for _, rest := range chain[k:] {
			rest.done <- err
		}
		return
	}
}

func (b *batcher) handled(j *job) {
	b.mu.Lock()
	b.applied[j.rec.Partition] = j.rec.Offset
	b.mu.Unlock()
}

// unhandle moves a partition's position back to just before j, so j and
// the records after it are applied again, in order, when retried.
func (b *batcher) unhandle(j *job) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if j.prev == -1 {
		delete(b.applied, j.rec.Partition)
		return
	}
	b.applied[j.rec.Partition] = j.prev
}
