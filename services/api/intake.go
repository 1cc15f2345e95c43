package api

import (
	"context"
	"errors"
	"net/http"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/metrics"
)

// defaultMaxWrites is Limits.MaxWrites when unset: four per processor. A
// write holds its slot for its CPU work and a round trip or two (its
// Postgres claims; the command's produce up to the client's buffer, or to
// the acknowledgement of a broker in this process), so four per processor
// keep the processors busy while a burst of writes waits its turn instead
// of all running at once.
func defaultMaxWrites() int { return 4 * max(1, runtime.GOMAXPROCS(0)) }

// errWriteTimeout is the cause of a write request's context ended by
// Limits.WriteTimeout before its command was sent.
var errWriteTimeout = errors.New("the command was not sent within the write timeout")

// writeRetryAfter is the Retry-After of a write that ran out of time, in
// seconds: a dependency that did not answer for the whole timeout is not
// back in less.
const writeRetryAfter = 2

// intake bounds the write requests (the commands) this instance prepares at
// once. A request takes a slot before its handler runs and gives it back
// once its command is sent (leaveIntake) or its handler returns, whichever
// comes first: the wait for a command's outcome holds none. A sender whose
// remaining wait is for brokers elsewhere gives the slot back earlier, once
// the command is handed to its Kafka client (CommandQueued). Requests beyond
// the bound wait for a slot in arrival order.
//
// Why: a burst of creates, each a goroutine with its own validation,
// Postgres claims and produce, otherwise runs all at once and queues every
// other goroutine of the process behind it, the streams of runs already
// under way among them (docs/performance.md, "A burst of creates and the
// deltas of runs already streaming").
//
// A write's time until its command is sent — its wait for a slot, its
// claims in the database, its produce — is bounded by the write timeout:
// past it, its context ends with errWriteTimeout and the client is answered
// 503, whatever dependency stopped answering. Without the bound, a broker
// or a database that stops answering would hold every slot, and every
// writer's connection, for as long as their clients wait.
type intake struct {
	slots   chan struct{}
	timeout time.Duration
	waiting atomic.Int64 // requests waiting for a slot
}

func newIntake(n int, timeout time.Duration) *intake {
	return &intake{slots: make(chan struct{}, n), timeout: timeout}
}

type intakeKey struct{}

// The states of a write: preparing until its command is sent (left) or its
// time runs out (expired), whichever comes first.
const (
	writePreparing int32 = iota
	writeLeft
	writeExpired
)

// intakeSlot is a write request's place in the intake: free gives its slot
// back, leave also stops its clock; each happens once.
type intakeSlot struct {
	in     *intake
	held   atomic.Bool // a slot is taken and not given back yet
	state  atomic.Int32
	clock  *time.Timer
	cancel context.CancelCauseFunc
	once   sync.Once
}

// free gives the write's slot back, if it still holds one. Its time runs
// on: the write is not sent yet.
func (s *intakeSlot) free() {
	if s.held.CompareAndSwap(true, false) {
		<-s.in.slots
	}
}

// leave ends the write's preparation: its slot goes back and its time no
// longer runs. A write that ran out of time first stays expired.
func (s *intakeSlot) leave() {
	s.once.Do(func() {
		s.clock.Stop()
		s.state.CompareAndSwap(writePreparing, writeLeft)
	})
	s.free()
}

// end is leave, and releases the write's context; the handler has returned.
func (s *intakeSlot) end() {
	s.leave()
	s.cancel(nil)
}

// expire ends the write's context with errWriteTimeout unless it left first.
func (s *intakeSlot) expire() {
	if s.state.CompareAndSwap(writePreparing, writeExpired) {
		s.cancel(errWriteTimeout)
	}
}

// enter starts a write: it returns ctx bounded by the write timeout and
// carrying the write's slot, once one is free. It fails when ctx ends
// first or the time runs out; end must be called in either case.
func (in *intake) enter(ctx context.Context) (context.Context, *intakeSlot, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	s := &intakeSlot{in: in, cancel: cancel}
	s.clock = time.AfterFunc(in.timeout, s.expire)
	select {
	case in.slots <- struct{}{}:
	default:
		if err := in.wait(ctx); err != nil {
			return ctx, s, context.Cause(ctx)
		}
	}
	s.held.Store(true)
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

// CommandQueued tells the API that the command of ctx's write request is
// handed to a client that delivers it with no more of this process's work:
// a Kafka client whose brokers run elsewhere, the command in its buffer.
// The request's intake slot goes back at once, for the next write to take,
// while the wait for the brokers' acknowledgement goes on without one. The
// write timeout still runs until the sender returns. A CommandSender calls
// it from Send; with any other ctx it does nothing.
//
// Holding the slot through that wait capped an instance's writes at about
// the bound ÷ the brokers' acknowledgement time, far below what the
// processors take when the brokers are slow to answer (docs/performance.md).
func CommandQueued(ctx context.Context) {
	if s, ok := ctx.Value(intakeKey{}).(*intakeSlot); ok {
		s.free()
	}
}

// timedOut reports whether ctx is a write's that ran out of time (the
// client is still there).
func timedOut(ctx context.Context) bool {
	return errors.Is(context.Cause(ctx), errWriteTimeout)
}

// writeTimedOut is the 503 of a write that ran out of time. Its command may
// have been sent all the same (a produce that went on without the request),
// so the client retries under the same Idempotency-Key.
func (a *API) writeTimedOut() error {
	p := newProblem(http.StatusServiceUnavailable, events.CodeUnavailable,
		"the command was not sent within "+a.cfg.Limits.WriteTimeout.String()+
			" (a dependency is slow or unavailable); it may still be queued: retry with the same Idempotency-Key")
	return huma.ErrorWithHeaders(p, http.Header{"Retry-After": {strconv.Itoa(writeRetryAfter)}})
}
