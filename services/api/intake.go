package api

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/xbot-runtime/xbot/infra/metrics"
)

// defaultMaxWrites is Limits.MaxWrites when unset: four per processor. A
// write holds its slot for its CPU work and a round trip or two (Postgres,
// the command's produce), so four per processor keep the processors busy
// while a burst of writes waits its turn instead of all running at once.
func defaultMaxWrites() int { return 4 * max(1, runtime.GOMAXPROCS(0)) }

// intake bounds the write requests (the commands) this instance prepares at
// once. A request takes a slot before its handler runs and gives it back
// once its command is sent (leaveIntake) or its handler returns, whichever
// comes first: the wait for a command's outcome holds none. Requests beyond
// the bound wait for a slot in arrival order, each until its context ends.
//
// Why: a burst of creates, each a goroutine with its own validation,
// Postgres claims and produce, otherwise runs all at once and queues every
// other goroutine of the process behind it, the streams of runs already
// under way among them (docs/performance.md, "A burst of creates and the
// deltas of runs already streaming").
type intake struct {
	slots   chan struct{}
	waiting atomic.Int64 // requests waiting for a slot
}

func newIntake(n int) *intake { return &intake{slots: make(chan struct{}, n)} }

type intakeKey struct{}

// intakeSlot is a request's slot; leave gives it back once.
type intakeSlot struct {
	once sync.Once
	in   *intake
}

func (s *intakeSlot) leave() { s.once.Do(func() { <-s.in.slots }) }

// enter waits for a slot and returns ctx carrying it; it fails only when
// ctx ends first.
func (in *intake) enter(ctx context.Context) (context.Context, *intakeSlot, error) {
	select {
	case in.slots <- struct{}{}:
	default:
		if err := in.wait(ctx); err != nil {
			return ctx, nil, err
		}
	}
	s := &intakeSlot{in: in}
	return context.WithValue(ctx, intakeKey{}, s), s, nil
}

// wait waits for a slot, counted as waiting.
func (in *intake) wait(ctx context.Context) error {
	in.waiting.Add(1)
	defer in.waiting.Add(-1)
	defer metrics.WriteWaits()()
	select {
	case in.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// leaveIntake gives back the slot of ctx's request early, if it holds one:
// its command is sent, and what remains is waiting.
func leaveIntake(ctx context.Context) {
	if s, ok := ctx.Value(intakeKey{}).(*intakeSlot); ok {
		s.leave()
	}
}
