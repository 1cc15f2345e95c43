package kafka

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// listTimeout bounds one listing of the end offsets for Barrier; callers
// that stop waiting do not cancel it, since others may share it.
const listTimeout = 10 * time.Second

// Barrier returns nil once the tail has delivered every record of the topic
// committed before Barrier was called: it lists the partitions' last stable
// offsets (with a listing that starts after the call; concurrent calls share
// one) and waits until the tail's position reaches each. It returns ctx's
// error if ctx ends first. Partitions the tail does not read (added after
// Run started) are not waited for.
func (t *Tail) Barrier(ctx context.Context) error {
	select {
	case <-t.ready:
	case <-ctx.Done():
		return ctx.Err()
	}
	ends, err := t.ends.get(ctx)
	if err != nil {
		return err
	}
	for {
		t.mu.Lock()
		behind := false
		for p, end := range ends {
			if pos, ok := t.pos[p]; ok && pos < end {
				behind = true
				break
			}
		}
		moved := t.moved
		t.mu.Unlock()
		if !behind {
			return nil
		}
		select {
		case <-moved:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// stableEnds lists each partition's last stable offset on the tail's client.
func (t *Tail) stableEnds(ctx context.Context) (map[int32]int64, error) {
	t.mu.Lock()
	admin := t.admin
	t.mu.Unlock()
	if admin == nil {
		return nil, errors.New("tail: not running")
	}
	offs, err := admin.ListCommittedOffsets(ctx, t.cfg.Topic)
	if err != nil {
		return nil, fmt.Errorf("list end offsets of %s: %w", t.cfg.Topic, err)
	}
	ends := map[int32]int64{}
	var errs []error
	offs.Each(func(o kadm.ListedOffset) {
		if o.Err != nil {
			errs = append(errs, fmt.Errorf("partition %d: %w", o.Partition, o.Err))
			return
		}
		ends[o.Partition] = o.Offset
	})
	return ends, errors.Join(errs...)
}

// endsFlights shares listings of the end offsets between concurrent
// Barrier calls while giving each call a listing that started after it:
// at most one listing runs at a time, and the calls that arrive while it
// runs share the next one.
type endsFlights struct {
	list func(context.Context) (map[int32]int64, error)

	mu      sync.Mutex
	running bool
	next    *endsFlight // the listing calls arriving now wait for
}

type endsFlight struct {
	done chan struct{}
	ends map[int32]int64
	err  error
}

// get returns the end offsets of a listing that started after the call, or
// ctx's error.
func (f *endsFlights) get(ctx context.Context) (map[int32]int64, error) {
	f.mu.Lock()
	if f.next == nil {
		f.next = &endsFlight{done: make(chan struct{})}
	}
	fl := f.next
	if !f.running {
		f.startLocked()
	}
	f.mu.Unlock()
	select {
	case <-fl.done:
		return fl.ends, fl.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// startLocked starts the listing f.next, after which the next waiting one
// starts. f.mu is held.
func (f *endsFlights) startLocked() {
	fl := f.next
	f.next = nil
	f.running = true
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), listTimeout)
		fl.ends, fl.err = f.list(ctx)
		cancel()
		close(fl.done)
		f.mu.Lock()
		defer f.mu.Unlock()
		f.running = false
		if f.next != nil {
			f.startLocked()
		}
	}()
}
