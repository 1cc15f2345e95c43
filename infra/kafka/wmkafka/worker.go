package wmkafka

import (
	"context"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/twmb/franz-go/pkg/kgo"
)

// A partition's queue is capped: when a slow handler lets pauseAt records
// pile up, fetching that partition pauses (other partitions go on) and
// resumes once the queue is down to resumeAt, early enough that the next
// fetch usually lands before the queue runs dry. Records a paused
// partition had buffered are dropped by franz-go and fetched again, not lost.
const (
	pauseAt  = 1024
	resumeAt = 256
)

// worker delivers one partition's records in order, one message at a time:
// it waits for the Ack of each before sending the next, and sends a Nacked
// one again after NackResendDelay.
type worker struct {
	sub       *subscription
	partition int32
	ctx       context.Context
	cancel    context.CancelFunc
	done      chan struct{}
	wake      chan struct{} // capacity 1: records were pushed

	queue  []*kgo.Record // guarded by sub.mu
	paused bool          // guarded by sub.mu
	// prev is the offset of the last message delivered (and Acked) before
	// the head, -1 at first; only the worker goroutine touches it.
	prev int64
}

func newWorker(s *subscription, partition int32) *worker {
	ctx, cancel := context.WithCancel(s.ctx)
	w := &worker{sub: s, partition: partition, ctx: ctx, cancel: cancel,
		done: make(chan struct{}), wake: make(chan struct{}, 1), prev: -1}
	if s.cfg.MaxInFlight > 1 {
		go w.runPipelined()
	} else {
		go w.run()
	}
	return w
}

// push appends polled records and pauses the partition when the queue is full.
func (w *worker) push(recs []*kgo.Record) {
	w.sub.mu.Lock()
	w.queue = append(w.queue, recs...)
	if len(w.queue) >= pauseAt && !w.paused {
		w.paused = true
		w.sub.cl.PauseFetchPartitions(w.partitions())
		w.sub.log.Debug("partition paused: handler behind", watermill.LogFields{"partition": w.partition, "queued": len(w.queue)})
	}
	w.sub.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// head waits for the oldest undelivered record; false when stopped.
func (w *worker) head() (*kgo.Record, bool) {
	for {
		w.sub.mu.Lock()
		if len(w.queue) > 0 {
			r := w.queue[0]
			w.sub.mu.Unlock()
			return r, true
		}
		w.sub.mu.Unlock()
		select {
		case <-w.wake:
		case <-w.ctx.Done():
			return nil, false
		}
	}
}

// pop drops the head after its message was Acked and resumes fetching when
// the queue has room again.
func (w *worker) pop(r *kgo.Record) {
	w.sub.mu.Lock()
	w.queue[0] = nil
	w.queue = w.queue[1:]
	if w.paused && len(w.queue) <= resumeAt {
		w.paused = false
		w.sub.cl.ResumeFetchPartitions(w.partitions())
		w.sub.log.Debug("partition resumed", watermill.LogFields{"partition": w.partition, "queued": len(w.queue)})
	}
	if w.sub.group {
		w.sub.acked[w.partition] = kgo.EpochOffset{Epoch: r.LeaderEpoch, Offset: r.Offset + 1}
	}
	w.sub.mu.Unlock()
}

func (w *worker) partitions() map[string][]int32 {
	return map[string][]int32{w.sub.topic: {w.partition}}
}

func (w *worker) run() {
	defer close(w.done)
	for {
		r, ok := w.head()
		if !ok {
			return
		}
		// Transaction markers are never delivered; passing them lets the
		// committed offset reach the end of the partition.
		if !r.Attrs.IsControl() {
			if !w.deliver(r) {
				return
			}
			w.prev = r.Offset
		}
		w.pop(r)
	}
}

// deliver sends r until it is Acked; false when the worker was stopped first.
func (w *worker) deliver(r *kgo.Record) bool {
	for {
		msg, cancel := toMessage(w.ctx, r, w.prev)
		select {
		case w.sub.out <- msg:
		case <-w.ctx.Done():
			cancel()
			return false
		}
		select {
		case <-msg.Acked():
			cancel()
			return true
		case <-msg.Nacked():
			cancel()
			w.sub.log.Debug("message nacked", w.fields(r, msg.UUID))
			if !w.sleep(w.sub.cfg.NackResendDelay) {
				return false
			}
		case <-w.ctx.Done():
			cancel()
			return false
		}
	}
}

func (w *worker) sleep(d time.Duration) bool {
	if d <= 0 {
		return w.ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-w.ctx.Done():
		return false
	}
}

func (w *worker) fields(r *kgo.Record, uuid string) watermill.LogFields {
	return watermill.LogFields{"partition": r.Partition, "offset": r.Offset, "message_uuid": uuid}
}

// stop cancels the worker and waits for it to return.
func (w *worker) stop() {
	w.cancel()
	<-w.done
}
