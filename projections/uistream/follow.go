package uistream

import (
	"context"
	"time"

	"github.com/xbot-runtime/xbot/events"
)

// maxUnflushed bounds what a burst of live events buffers before it is
// flushed: enough to batch a burst into few writes, small per client.
const maxUnflushed = 64 << 10

// follow streams run r until its reply ends: what the read model has, then
// live events from the subscription (subscribed before the backfill, so
// nothing falls in between; events already mapped are dropped).
func (c *conn) follow(ctx context.Context, r *runFeed) error {
	if err := c.begin(ctx, r); err != nil {
		return err
	}
	tick := time.NewTicker(c.s.cfg.KeepAlive)
	defer tick.Stop()
	idle := true
	for !r.m.Ended() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case e := <-c.sub.Events():
			burst, err := c.event(ctx, r, e)
			if err != nil {
				return err
			}
			idle = false
			if burst && c.f.buf.Len() < maxUnflushed {
				continue // flush once the burst is mapped
			}
		case <-c.sub.Done():
			return c.cutOff(ctx, r)
		case <-tick.C:
			if err := c.tick(ctx, r, idle); err != nil {
				return err
			}
			idle = true
		}
		if err := c.flush(); err != nil {
			return err
		}
	}
	return c.flush()
}

// begin maps what the hub retains of the run from its first event, or else
// what the read model has, and sends it. A young run's stream so reads no
// read model at all. The hub may also have events the read model does not
// have yet, and no later event would reveal that gap if the run is quiet:
// begin maps them too, from the hub's retained events (or, when it no longer
// holds them, the read model).
func (c *conn) begin(ctx context.Context, r *runFeed) error {
	n, err := r.retained()
	if err != nil {
		return err
	}
	if n == 0 {
		if _, err := r.backfill(ctx); err != nil {
			return err
		}
	}
	if err := c.flush(); err != nil {
		return err
	}
	if known := c.s.hub.LastSeq(r.runID); known > r.m.LastSeq() {
		if err := r.catchUp(ctx, known); err != nil {
			return err
		}
	}
	return c.flush()
}

// event maps a live event of r's run (another run's, in a session, is read
// from the read model when its turn comes). burst says more events wait.
func (c *conn) event(ctx context.Context, r *runFeed, e *events.Envelope) (burst bool, err error) {
	if e.RunID == r.runID {
		if err := r.live(ctx, *e); err != nil {
			return false, err
		}
	}
	return len(c.sub.Events()) > 0, nil
}

// tick sends a keep-alive. A stream that heard nothing since the last tick
// also asks the read model: a missed live event (the hub started after it
// was published) is found this way within one interval.
func (c *conn) tick(ctx context.Context, r *runFeed, idle bool) error {
	if idle {
		if _, err := r.backfill(ctx); err != nil {
			return err
		}
	}
	if r.m.Ended() {
		return nil
	}
	c.f.keepAlive()
	return nil
}

// cutOff maps what the subscription still holds and ends the stream: the
// client resumes from the last id it got.
func (c *conn) cutOff(ctx context.Context, r *runFeed) error {
	for {
		select {
		case e := <-c.sub.Events():
			if e.RunID != r.runID {
				continue
			}
			if err := r.live(ctx, *e); err != nil {
				return err
			}
		default:
			if r.m.Ended() {
				return nil
			}
			return ErrCutOff
		}
	}
}
