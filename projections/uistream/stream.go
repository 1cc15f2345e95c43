package uistream

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/events"
)

// Source reads committed events from the read model (Postgres), scoped to
// one tenant by its implementation.
type Source interface {
	// RunEvents returns up to limit events of runID with seq > afterSeq, in
	// seq order.
	RunEvents(ctx context.Context, runID string, afterSeq int64, limit int) ([]events.Envelope, error)
}

// StreamConfig configures a Streamer.
type StreamConfig struct {
	// KeepAlive is how often an idle stream sends a comment line. Default
	// 15 s, well inside the 60 s idle timeout of common proxies.
	KeepAlive time.Duration
	// WriteTimeout is how long a client may take to accept a write before it
	// is dropped. Default 30 s.
	WriteTimeout time.Duration
	// PageSize is how many events one backfill query reads. Default 500.
	PageSize int
	// CatchUpTimeout is how long a stream waits for the read model to hold
	// events the live log already has before it gives up (the client
	// reconnects). Default 30 s, far beyond the projector's normal lag.
	CatchUpTimeout time.Duration
	// Logger is required.
	Logger *zap.Logger
}

func (c *StreamConfig) setDefaults() {
	if c.KeepAlive == 0 {
		c.KeepAlive = 15 * time.Second
	}
	if c.WriteTimeout == 0 {
		c.WriteTimeout = 30 * time.Second
	}
	if c.PageSize == 0 {
		c.PageSize = 500
	}
	if c.CatchUpTimeout == 0 {
		c.CatchUpTimeout = 30 * time.Second
	}
}

// Validate reports every problem of the configuration (after defaults).
func (c StreamConfig) Validate() error {
	var errs []error
	if c.KeepAlive <= 0 || c.WriteTimeout <= 0 || c.CatchUpTimeout <= 0 {
		errs = append(errs, errors.New("uistream: KeepAlive, WriteTimeout and CatchUpTimeout must be positive"))
	}
	if c.PageSize < 1 {
		errs = append(errs, errors.New("uistream: PageSize must be at least 1"))
	}
	if c.Logger == nil {
		errs = append(errs, errors.New("uistream: Logger is required"))
	}
	return errors.Join(errs...)
}

// Errors that end a stream early. The client reconnects with the last id it
// received and loses nothing.
var (
	// ErrCutOff: the client fell too far behind the live log.
	ErrCutOff = errors.New("stream cut off: the client fell too far behind; reconnect with Last-Event-ID")
	// ErrBehind: the read model did not catch up with the live log in time.
	ErrBehind = errors.New("the read model is behind the event log")
)

// Streamer serves run and session streams: backfill from a Source, then
// live events from the Hub, with no gap and no duplicate at the seam.
type Streamer struct {
	cfg StreamConfig
	hub *Hub
}

// NewStreamer returns a streamer over hub. A nil hub is a wiring bug.
func NewStreamer(cfg StreamConfig, hub *Hub) (*Streamer, error) {
	if hub == nil {
		panic("uistream.NewStreamer: hub is nil")
	}
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Streamer{cfg: cfg, hub: hub}, nil
}

// Run streams the reply of run runID after position from, then [DONE] once
// the reply has ended. The caller has checked that the tenant owns the run
// and set the headers (SetHeaders).
func (s *Streamer) Run(ctx context.Context, sink Sink, src Source, tenantID, runID string, from Position) error {
	sub := s.hub.SubscribeRun(tenantID, runID) // before the backfill: nothing falls between the two
	defer sub.Close()
	c := &conn{s: s, sink: sink, f: newFrames(), sub: sub}
	defer c.release()
	err := c.follow(ctx, &runFeed{c: c, src: src, m: NewMapper(runID), runID: runID, from: from})
	if err != nil {
		_ = c.flush() // what was mapped before the error is valid; the client resumes after it
		return err
	}
	c.f.done()
	return c.flush()
}

// conn is one client's connection.
type conn struct {
	s    *Streamer
	sink Sink
	f    *frames
	sub  *Subscription
	// deadlineAt is when the write deadline was last moved.
	deadlineAt time.Time
}

func (c *conn) flush() error {
	if c.f.buf.Len() == 0 {
		return nil
	}
	// Moving the deadline costs a syscall-level lock; a deadline between
	// 3/4 and all of WriteTimeout ahead is as good.
	if now := time.Now(); now.Sub(c.deadlineAt) > c.s.cfg.WriteTimeout/4 {
		if err := c.sink.SetWriteDeadline(now.Add(c.s.cfg.WriteTimeout)); err != nil {
			return err
		}
		c.deadlineAt = now
	}
	_, err := c.sink.Write(c.f.buf.Bytes())
	c.f.buf.Reset()
	if err != nil {
		return fmt.Errorf("write stream: %w", err)
	}
	return c.sink.Flush()
}

// release clears the write deadline, so a kept-alive connection's next
// response is not cut by it.
func (c *conn) release() { _ = c.sink.SetWriteDeadline(time.Time{}) }

// runFeed maps one run's events in seq order and frames the chunks after
// from.
type runFeed struct {
	c      *conn
	src    Source
	m      *Mapper
	runID  string
	from   Position
	prefix string // SSE id prefix: "" for a run stream, "<runId>:" for a session stream
}

// backfill maps the events the read model has after the last one mapped,
// until the reply ends or the read model has no more; it returns how many
// it mapped.
func (r *runFeed) backfill(ctx context.Context) (int, error) {
	n := 0
	for !r.m.Ended() {
		evs, err := r.src.RunEvents(ctx, r.runID, r.m.LastSeq(), r.c.s.cfg.PageSize)
		if err != nil {
			return n, fmt.Errorf("backfill run %s after seq %d: %w", r.runID, r.m.LastSeq(), err)
		}
		for _, e := range evs {
			if r.m.Ended() {
				break
			}
			if err := r.c.f.mapEvent(r.m, e, r.from, r.prefix); err != nil {
				return n, err
			}
			n++
		}
		if len(evs) < r.c.s.cfg.PageSize {
			return n, nil
		}
	}
	return n, nil
}

// catchUp maps events until seq upto is mapped: the hub's retained events
// where they continue what is mapped, else the read model, waiting for the
// projector when it lags behind the live log.
func (r *runFeed) catchUp(ctx context.Context, upto int64) error {
	deadline := time.Now().Add(r.c.s.cfg.CatchUpTimeout)
	wait := 10 * time.Millisecond // first re-poll: a projector batch usually lands within a few ms
	for r.m.LastSeq() < upto && !r.m.Ended() {
		n, err := r.retained()
		if err != nil {
			return err
		}
		if n == 0 {
			if n, err = r.backfill(ctx); err != nil {
				return err
			}
		}
		if n > 0 {
			continue
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w: run %s has seq %d committed, the read model stops at %d", ErrBehind, r.runID, upto, r.m.LastSeq())
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, time.Second)
	}
	return nil
}

// retained maps the hub's retained events that continue what is mapped, and
// returns how many it mapped (0 when the hub no longer holds the next one).
func (r *runFeed) retained() (int, error) {
	n := 0
	for _, e := range r.c.s.hub.Recent(r.c.sub.tenant, r.runID, r.m.LastSeq()) {
		if e.Seq != r.m.LastSeq()+1 || r.m.Ended() {
			break
		}
		if err := r.c.f.mapEvent(r.m, *e, r.from, r.prefix); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// live maps a live event: one already mapped is dropped, one beyond the next
// seq first makes the read model fill the gap.
func (r *runFeed) live(ctx context.Context, e events.Envelope) error {
	if e.Seq > r.m.LastSeq()+1 {
		if err := r.catchUp(ctx, e.Seq-1); err != nil {
			return err
		}
	}
	if e.Seq <= r.m.LastSeq() || r.m.Ended() {
		return nil
	}
	return r.c.f.mapEvent(r.m, e, r.from, r.prefix)
}
