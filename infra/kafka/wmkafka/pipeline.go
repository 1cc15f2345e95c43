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

// runPipelined delivers up to MaxInFlight messages of the partition at once,
// in offset order. The queue's head is the oldest unacked record; window
// holds the delivered ones from the head on. Acks may come in any order;
// only a contiguous acked prefix is popped (and so committed). A Nack
// cancels every message from the Nacked one on, waits NackResendDelay and
// delivers them again from there.
func (w *worker) runPipelined() {
	defer close(w.done)
	var (
		window []*inflight
		gen    int
		events = make(chan outcome, w.sub.cfg.MaxInFlight)
	)
	cancelFrom := func(i int) {
		for _, f := range window[i:] {
			if f.cancel != nil {
				f.cancel()
			}
		}
		window = window[:i]
	}
	defer func() { cancelFrom(0) }()
	for {
		// Pop the acked prefix (control records count as acked).
		for len(window) > 0 && window[0].acked {
			w.pop(window[0].rec)
			if !window[0].rec.Attrs.IsControl() {
				w.prev = window[0].rec.Offset
			}
			window[0] = nil
			window = window[1:]
		}
		// Fill the window.
		if next, ok := w.at(len(window)); ok && len(window) < w.sub.cfg.MaxInFlight {
			f := &inflight{rec: next, gen: gen}
			if next.Attrs.IsControl() {
				f.acked = true
				window = append(window, f)
				continue
			}
			prev := w.prev
			for j := len(window) - 1; j >= 0; j-- {
				if !window[j].rec.Attrs.IsControl() {
					prev = window[j].rec.Offset
					break
				}
			}
			msg, cancel := toMessage(w.ctx, next, prev)
			f.cancel = cancel
			select {
			case w.sub.out <- msg:
			case <-w.ctx.Done():
				cancel()
				return
			}
			off, g := next.Offset, gen
			window = append(window, f)
			go func() {
				select {
				case <-msg.Acked():
					events <- outcome{gen: g, offset: off, ack: true}
				case <-msg.Nacked():
					events <- outcome{gen: g, offset: off}
				case <-w.ctx.Done():
				}
			}()
			continue
		}
		select {
		case o := <-events:
			// Outcomes arrive from separate goroutines in any order: match
			// the delivery, not the current generation.
			i := slices.IndexFunc(window, func(f *inflight) bool { return f.rec.Offset == o.offset && f.gen == o.gen })
			if i < 0 {
				continue // an outcome of a message already given up by a Nack
			}
			if o.ack {
				window[i].acked = true
				continue
			}
			w.sub.log.Debug("message nacked; redelivering from it", w.fields(window[i].rec, ""))
			cancelFrom(i)
			gen++
			if !w.sleep(w.sub.cfg.NackResendDelay) {
				return
			}
		case <-w.wake:
		case <-w.ctx.Done():
			return
		}
	}
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
