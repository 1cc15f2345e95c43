package wmkafka

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kgo"
)

// inflight is one delivered, not yet Acked message of a pipelined worker.
type inflight struct {
	rec    *kgo.Record
	cancel func()
	acked  bool
	gen    int // the generation it was delivered in
}

// outcome is an Ack or Nack of the message at offset, delivered in
// generation gen (a Nack starts a new generation).
type outcome struct {
	gen    int
	offset int64
	ack    bool
}

// pipeline is the state of a pipelined worker: the queue's head is the
// oldest unacked record; window holds the delivered ones from the head on.
type pipeline struct {
	w      *worker
	window []*inflight
	gen    int
	events chan outcome
}

// runPipelined delivers up to MaxInFlight messages of the partition at once,
// in offset order. Acks may come in any order; only a contiguous acked
// prefix is popped (and so committed). A Nack cancels every message from the
// Nacked one on, waits NackResendDelay and delivers them again from there.
func (w *worker) runPipelined() {
	defer close(w.done)
	p := &pipeline{w: w, events: make(chan outcome, w.sub.cfg.MaxInFlight)}
	defer p.cancelFrom(0)
	for {
		p.popAcked()
		if next, ok := w.at(len(p.window)); ok && len(p.window) < w.sub.cfg.MaxInFlight {
			if !p.deliver(next) {
				return
			}
			continue
		}
		select {
		case o := <-p.events:
			if !p.settle(o) {
				return
			}
		case <-w.wake:
		case <-w.ctx.Done():
			return
		}
	}
}

// popAcked pops the acked prefix of the window (control records count as acked).
func (p *pipeline) popAcked() {
	for len(p.window) > 0 && p.window[0].acked {
		p.w.pop(p.window[0].rec)
		if !p.window[0].rec.Attrs.IsControl() {
			p.w.prev = p.window[0].rec.Offset
		}
		p.window[0] = nil
		p.window = p.window[1:]
	}
}

// deliver sends next and watches its outcome; false when the worker stopped.
func (p *pipeline) deliver(next *kgo.Record) bool {
	f := &inflight{rec: next, gen: p.gen}
	if next.Attrs.IsControl() {
		f.acked = true
		p.window = append(p.window, f)
		return true
	}
	prev := p.w.prev
	for j := len(p.window) - 1; j >= 0; j-- {
		if !p.window[j].rec.Attrs.IsControl() {
			prev = p.window[j].rec.Offset
			break
		}
	}
	msg, cancel := toMessage(p.w.ctx, next, prev)
	f.cancel = cancel
	select {
	case p.w.sub.out <- msg:
	case <-p.w.ctx.Done():
		cancel()
		return false
	}
	p.window = append(p.window, f)
	off, g, ctx, events := next.Offset, p.gen, p.w.ctx, p.events
	go func() {
		select {
		case <-msg.Acked():
			events <- outcome{gen: g, offset: off, ack: true}
		case <-msg.Nacked():
			events <- outcome{gen: g, offset: off}
		case <-ctx.Done():
		}
	}()
	return true
}

// settle records an outcome; false when the worker stopped while waiting to
// redeliver.
func (p *pipeline) settle(o outcome) bool {
	// Outcomes arrive from separate goroutines in any order: match the
	// delivery, not the current generation.
	i := slices.IndexFunc(p.window, func(f *inflight) bool { return f.rec.Offset == o.offset && f.gen == o.gen })
	if i < 0 {
		return true // an outcome of a message already given up by a Nack
	}
	if o.ack {
		p.window[i].acked = true
		return true
	}
	p.w.sub.log.Debug("message nacked; redelivering from it", p.w.fields(p.window[i].rec, ""))
	p.cancelFrom(i)
	p.gen++
	return p.w.sleep(p.w.sub.cfg.NackResendDelay)
}

// cancelFrom gives up the messages from index i of the window on.
func (p *pipeline) cancelFrom(i int) {
	for _, f := range p.window[i:] {
		if f.cancel != nil {
			f.cancel()
		}
	}
	p.window = p.window[:i]
}

// at returns the i-th queued record (0 = head), if there is one.
func (w *worker) at(i int) (*kgo.Record, bool) {
	w.sub.mu.Lock()
	defer w.sub.mu.Unlock()
	if i < len(w.queue) {
		return w.queue[i], true
	}
	return nil, false
}
