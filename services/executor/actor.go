package executor

import (
	"context"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/kafka"
)

// actor is the single goroutine that owns one partition's runs: it admits
// commands, folds and appends events (group commit: everything waiting goes
// into one transaction), and starts engines.
type actor struct {
	ex   *Executor
	part *kafka.Partition
	log  *zap.Logger

	inbox   chan any
	ctx     context.Context
	cancel  context.CancelFunc
	stopped chan struct{}

	runs    map[string]*Run // touched only by the loop goroutine
	keys    map[string]*keyQueue
	timers  map[string]*time.Timer // pause-TTL timers of paused runs
	engines sync.WaitGroup
}

type appendReq struct {
	runID  string
	drafts []events.Draft
	opts   AppendOptions
	done   chan appendResult
}

type appendResult struct {
	state events.RunState
	err   error
}

type commandRecs []kafka.Record

func newActor(ctx context.Context, ex *Executor, part *kafka.Partition) *actor {
	actx, cancel := context.WithCancel(ctx)
	return &actor{
		ex: ex, part: part, log: ex.log.With(zap.Int32("partition", part.ID())),
		inbox: make(chan any, ex.cfg.MaxBatch), ctx: actx, cancel: cancel,
		stopped: make(chan struct{}), runs: map[string]*Run{},
		keys: map[string]*keyQueue{}, timers: map[string]*time.Timer{},
	}
}

// submit hands a message to the loop; it fails once the actor stopped.
func (a *actor) submit(ctx context.Context, m any) error {
	select {
	case a.inbox <- m:
		return nil
	case <-a.stopped:
		return kafka.ErrPartitionLost
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (a *actor) loop() {
	defer close(a.stopped)
	for {
		var msgs []any
		select {
		case m := <-a.inbox:
			msgs = append(msgs, m)
		case <-a.ctx.Done():
			return
		}
		msgs = a.drain(msgs)
		b := newBatch(a)
		for _, m := range msgs {
			b.add(m)
		}
		if len(b.recs) == 0 {
			b.finish()
			continue
		}
		if err := a.part.Append(a.ctx, b.recs, b.cmdOffset); err != nil {
			a.log.Error("append failed; partition given up", zap.Error(err))
			b.fail(err)
			a.cancel()
			return
		}
		b.commit()
		b.finish()
	}
}

// drain takes whatever else is waiting, up to MaxBatch messages.
func (a *actor) drain(msgs []any) []any {
	for len(msgs) < a.ex.cfg.MaxBatch {
		select {
		case m := <-a.inbox:
			msgs = append(msgs, m)
		default:
			return msgs
		}
	}
	return msgs
}

// stop ends the loop and waits for the run engines to return.
func (a *actor) stop() {
	a.cancel()
	<-a.stopped
	for _, t := range a.timers {
		t.Stop()
	}
	a.failWaiting()
	a.engines.Wait()
}

// failWaiting answers append requests left in the inbox after the loop ended.
func (a *actor) failWaiting() {
	for {
		select {
		case m := <-a.inbox:
			if r, ok := m.(*appendReq); ok {
				r.done <- appendResult{err: kafka.ErrPartitionLost}
			}
		default:
			return
		}
	}
}

func (a *actor) run(id string) *Run {
	r, ok := a.runs[id]
	if !ok {
		r = &Run{id: id, actor: a}
		a.runs[id] = r
	}
	return r
}
