package executor

import (
	"context"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/kafka"
)

// partitionWorker is the single goroutine that owns one partition's runs: it admits
// commands, folds and appends events (group commit: everything waiting goes
// into one transaction), and starts engines.
type partitionWorker struct {
	ex   *Executor
	part *kafka.Partition
	log  *zap.Logger

	inbox   chan any
	ctx     context.Context
	cancel  context.CancelFunc
	stopped chan struct{}

	runs    map[string]*Run // live runs (and finished ones a batch reads); touched only by the loop goroutine
	keys    map[string]*keyQueue
	timers  map[string]*time.Timer // pause-TTL timers of paused runs
	engines sync.WaitGroup

	// Checkpoints (checkpoint.go); touched only by the loop goroutine.
	finished    map[string]finishedRef // runs that ended: where their checkpoints are
	recent      map[string]*Run        // some of them, kept in memory (keepRecent)
	recentOrder []string
	lags        lagSet // live runs whose checkpoint is behind (lag.go)
	nextCmd     int64  // first command not consumed
	eventsEnd   int64  // at or before the next event's offset
	cpEnd       int64  // at or before the next checkpoint record's offset
	baseFrom    int64  // where the latest base begins
	sinceBase   int    // checkpoint records written from baseFrom on
	nextOrder   int64  // queue position of the next accepted run
}

type appendReq struct {
	run    *Run
	runID  string
	drafts []events.Draft
	opts   AppendOptions
	posted bool // Run.Post: nobody waits for the answer
	done   chan appendResult
}

type appendResult struct {
	state events.RunState
	err   error
}

type commandRecs []kafka.Record

func newPartitionWorker(ctx context.Context, ex *Executor, part *kafka.Partition) *partitionWorker {
	actx, cancel := context.WithCancel(ctx)
	return &partitionWorker{
		ex: ex, part: part, log: ex.log.With(zap.Int32("partition", part.ID())),
		inbox: make(chan any, ex.cfg.MaxBatch), ctx: actx, cancel: cancel,
		stopped: make(chan struct{}), runs: map[string]*Run{},
		keys: map[string]*keyQueue{}, timers: map[string]*time.Timer{},
		finished: map[string]finishedRef{}, recent: map[string]*Run{},
	}
}

// submit hands a message to the loop; it fails once the worker stopped.
func (w *partitionWorker) submit(ctx context.Context, m any) error {
	select {
	case w.inbox <- m:
		return nil
	case <-w.stopped:
		return kafka.ErrPartitionLost
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (w *partitionWorker) loop() {
	defer close(w.stopped)
	for {
		var msgs []any
		select {
		case m := <-w.inbox:
			msgs = append(msgs, m)
		case <-w.ctx.Done():
			return
		}
		msgs = w.drain(msgs)
		b := newBatch(w)
		for _, m := range msgs {
			b.add(m)
		}
		if !w.linger(b, len(msgs)) {
			b.fail(kafka.ErrPartitionLost)
			return
		}
		if len(b.recs) == 0 && b.err == nil {
			b.finish()
			continue
		}
		err := b.err
		if err == nil {
			err = b.checkpoints()
		}
		if err != nil {
			// A finished run's checkpoint could not be read (or encoded):
			// deciding without it could answer a command wrongly. Give the
			// partition up; its next owner reads again.
			w.log.Error("batch cannot be checkpointed; partition given up", zap.Error(err))
			b.fail(err)
			w.part.GiveUp(err)
			w.cancel()
			return
		}
		if err := w.part.Append(w.ctx, b.recs, b.cmdOffset); err != nil {
			w.log.Error("append failed; partition given up", zap.Error(err))
			b.fail(err)
			w.cancel()
			return
		}
		b.commit()
		b.finish()
	}
}

// linger keeps folding into b, which holds n messages, while it holds only
// appends nobody waits for: until one that needs its commit arrives, the
// batch is full or Linger passed. It returns false when the worker stops.
func (w *partitionWorker) linger(b *batch, n int) bool {
	if b.urgent || len(b.recs) == 0 || w.ex.cfg.Linger < 0 {
		return true
	}
	t := time.NewTimer(w.ex.cfg.Linger)
	defer t.Stop()
	for ; !b.urgent && n < w.ex.cfg.MaxBatch; n++ {
		select {
		case m := <-w.inbox:
			b.add(m)
		case <-t.C:
			return true
		case <-w.ctx.Done():
			return false
		}
	}
	return true
}

// drain takes whatever else is waiting, up to MaxBatch messages.
func (w *partitionWorker) drain(msgs []any) []any {
	for len(msgs) < w.ex.cfg.MaxBatch {
		select {
		case m := <-w.inbox:
			msgs = append(msgs, m)
		default:
			return msgs
		}
	}
	return msgs
}

// stop ends the loop and waits for the run engines to return.
func (w *partitionWorker) stop() {
	w.cancel()
	<-w.stopped
	for _, t := range w.timers {
		t.Stop()
	}
	w.failWaiting()
	w.engines.Wait()
}

// failWaiting answers append requests left in the inbox after the loop ended.
func (w *partitionWorker) failWaiting() {
	for {
		select {
		case m := <-w.inbox:
			if r, ok := m.(*appendReq); ok {
				if r.posted {
					r.run.loseAppend(kafka.ErrPartitionLost)
				}
				r.done <- appendResult{err: kafka.ErrPartitionLost}
			}
		default:
			return
		}
	}
}

func (w *partitionWorker) run(id string) *Run {
	r, ok := w.runs[id]
	if !ok {
		// A run this worker sees accepted: it has seen every event of it.
		r = &Run{id: id, worker: w, from: -1, order: -1, loaded: true}
		w.runs[id] = r
	}
	return r
}
