package uistream

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// RunRef is a run of a session. A session's runs are streamed one after the
// other in session order: by CreatedAt (the run's acceptance), then RunID.
type RunRef struct {
	RunID     string
	CreatedAt time.Time
	Ended     bool
}

// SessionSource reads one session of one tenant from the read model.
type SessionSource interface {
	Source
	// SessionRuns returns up to limit runs of the session after `after` in
	// session order (from the first when after is the zero RunRef).
	SessionRuns(ctx context.Context, after RunRef, limit int) ([]RunRef, error)
	// SessionRun returns the run runID of the session, or an error for
	// which errors.Is(err, ErrNotInSession) holds.
	SessionRun(ctx context.Context, runID string) (RunRef, error)
	// SessionHead returns the first run of the session whose reply has not
	// ended or, when every reply ended, the last run; ok is false when the
	// session has no run.
	SessionHead(ctx context.Context) (ref RunRef, ok bool, err error)
}

// ErrNotInSession is returned for a cursor naming a run of another session.
var ErrNotInSession = errors.New("run is not in this session")

// Session streams the replies of a session's runs one after the other, each
// from its start chunk to its end, and stays open for the session's next
// runs until the client leaves. With from, it resumes there. Without, it
// starts at the first reply that has not ended, from its start, so no delta
// ever arrives without its start; when every reply has ended it waits for
// the next run. A run created while an earlier one of the same session is
// still going is streamed after that one ends (its events are not lost,
// only later).
func (s *Streamer) Session(ctx context.Context, sink Sink, src SessionSource, tenantID, sessionID string, from *SessionPosition) error {
	sub := s.hub.SubscribeSession(tenantID, sessionID) // before the backfill: nothing falls between the two
	defer sub.Close()
	c := &conn{s: s, sink: sink, f: newFrames(), sub: sub}
	defer c.release()
	cur, pos, follow, err := sessionStart(ctx, src, from)
	if err != nil {
		return err
	}
	for {
		if follow {
			r := &runFeed{c: c, src: src, m: NewMapper(cur.RunID), runID: cur.RunID, from: pos, prefix: cur.RunID + ":"}
			if err := c.follow(ctx, r); err != nil {
				_ = c.flush()
				return err
			}
		}
		// A session whose first run the read model does not list yet has
		// one on its way (the API streams only a session it knows of): look
		// for it at once, not at the next keep-alive.
		expect := cur.RunID == ""
		if cur, err = c.nextRun(ctx, src, cur, expect); err != nil {
			_ = c.flush()
			return err
		}
		pos, follow = Position{}, true
	}
}

// sessionStart returns the run a session stream begins with, the position
// in it, and whether it is streamed (false: it ended, wait for the next).
func sessionStart(ctx context.Context, src SessionSource, from *SessionPosition) (RunRef, Position, bool, error) {
	if from != nil {
		ref, err := src.SessionRun(ctx, from.RunID)
		if err != nil {
			return RunRef{}, Position{}, false, fmt.Errorf("session cursor %s: %w", from, err)
		}
		return ref, from.Pos, true, nil
	}
	head, ok, err := src.SessionHead(ctx)
	if err != nil {
		return RunRef{}, Position{}, false, fmt.Errorf("session head: %w", err)
	}
	if !ok {
		return RunRef{}, Position{}, false, nil // no run yet: wait for the first
	}
	return head, Position{}, !head.Ended, nil
}

// nextRun waits for the run after cur in session order. A live event of a
// run the read model does not list yet (or expect: a run is known to come)
// makes it poll until the projector has the run; otherwise it re-reads at
// every keep-alive.
func (c *conn) nextRun(ctx context.Context, src SessionSource, cur RunRef, expect bool) (RunRef, error) {
	w := &runWait{c: c, cur: cur.RunID, tick: time.NewTicker(c.s.cfg.KeepAlive)}
	defer w.tick.Stop()
	if expect {
		w.startPolling()
	}
	for {
		runs, err := src.SessionRuns(ctx, cur, 1)
		if err != nil {
			return RunRef{}, fmt.Errorf("next run of the session after %s: %w", cur.RunID, err)
		}
		if len(runs) > 0 {
			return runs[0], nil
		}
		if err := c.flush(); err != nil {
			return RunRef{}, err
		}
		if err := w.wait(ctx); err != nil {
			return RunRef{}, err
		}
	}
}

// runWait waits for a reason to look for the session's next run again.
type runWait struct {
	c        *conn
	cur      string
	tick     *time.Ticker
	polling  bool
	delay    time.Duration
	deadline time.Time
}

func (w *runWait) wait(ctx context.Context) error {
	var poll <-chan time.Time
	if w.polling && time.Now().Before(w.deadline) {
		poll, w.delay = time.After(w.delay), min(2*w.delay, time.Second)
	} else {
		w.polling = false
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-w.c.sub.Done():
			return ErrCutOff
		case e := <-w.c.sub.Events():
			if e.RunID == w.cur || w.polling {
				continue // the last run's late outcomes, or already polling
			}
			w.startPolling()
			return nil
		case <-poll:
			return nil
		case <-w.tick.C:
			w.c.f.keepAlive()
			return nil
		}
	}
}

// startPolling re-reads the session's runs soon and more slowly after, until
// CatchUpTimeout: a projector batch usually lands within a few ms.
func (w *runWait) startPolling() {
	w.polling, w.delay, w.deadline = true, 10*time.Millisecond, time.Now().Add(w.c.s.cfg.CatchUpTimeout)
}
