package agentruntime

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"time"

	"github.com/xbot-runtime/xbot/services/api/client"
)

// Events yields the conversation's events after cursor (from its very
// beginning when cursor is nil) for as long as the loop runs and the client
// is open: each reply of the session's runs in order, live. The same cursor
// gives the same events after it, for any reader and across reconnects:
// they are mapped from the session stream, which is deterministic, and the
// cursor carries the mapping's state. A dropped connection is resumed by
// itself. An error is yielded once, last: ErrCursorExpired for a cursor
// this conversation cannot continue from, ErrClosed after Close, ctx's
// error, or why the stream failed.
func (c *Client) Events(ctx context.Context, cursor *Cursor) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		if err := c.live(); err != nil {
			yield(nil, err)
			return
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		defer context.AfterFunc(c.life, cancel)()
		pos, err := c.startAt(ctx, cursor)
		if err != nil {
			yield(nil, c.streamError(ctx, err))
			return
		}
		if err := c.follow(ctx, pos, yield); err != nil {
			yield(nil, c.streamError(ctx, err))
		}
	}
}

// follow reads the session stream after pos and yields the events of each
// log event's chunks as its last chunk arrives.
func (c *Client) follow(ctx context.Context, pos position, yield func(Event, error) bool) error {
	var chunks []client.Chunk
	for ch, err := range c.cfg.API.SessionChunks(ctx, c.cfg.SessionID, client.StreamOptions{After: pos.After}) {
		if err != nil {
			return err
		}
		chunks = append(chunks, ch)
		if _, last := eventKey(ch.EventID); !last {
			continue
		}
		evs, next := mapChunks(pos.mapState, chunks)
		for i, ev := range evs {
			at := position{After: ch.EventID, mapState: next}
			if i < len(evs)-1 {
				at = position{After: pos.After, Skip: i + 1, mapState: pos.mapState}
			}
			if i < pos.Skip {
				continue // yielded before the cursor
			}
			c.remember(ev)
			if !yield(ev.placed(c.cursor(at)), nil) {
				return nil
			}
		}
		pos, chunks = position{After: ch.EventID, mapState: next}, chunks[:0]
	}
	return nil
}

// streamError is what Events reports for err.
func (c *Client) streamError(ctx context.Context, err error) error {
	var p *client.Problem
	switch {
	case c.closed.Load():
		return ErrClosed
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		return err
	case errors.As(err, &p) && p.Status == http.StatusUnprocessableEntity:
		return fmt.Errorf("%w: %w", ErrCursorExpired, err)
	}
	return fmt.Errorf("agentruntime: events of session %s: %w", c.cfg.SessionID, err)
}

// startAt is where Events begins: the cursor's position, or before the
// session's first run (waiting for the session to have one).
func (c *Client) startAt(ctx context.Context, cursor *Cursor) (position, error) {
	if cursor != nil {
		return c.parse(*cursor)
	}
	for delay := firstRunPoll; ; delay = min(2*delay, firstRunPollMax) {
		page, err := c.cfg.API.ListSessionRuns(ctx, c.cfg.SessionID, client.RunQuery{Page: client.Page{Limit: 1}})
		switch {
		case err == nil && page.Session.FirstRunID != "":
			return position{After: page.Session.FirstRunID + ":0"}, nil
		case err != nil && !errors.Is(err, client.ErrNotFound):
			return position{}, err
		}
		if err := sleep(ctx, delay); err != nil {
			return position{}, err
		}
	}
}

// How often Events looks for a new session's first run: soon (a submit
// usually follows at once), then at most every second.
const (
	firstRunPoll    = 50 * time.Millisecond
	firstRunPollMax = time.Second
)

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// remember notes an interaction the events opened, for Answer, until the
// events close it: the map holds open interactions only.
func (c *Client) remember(ev Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch e := ev.(type) {
	case InteractionOpened:
		c.seen[e.InteractionID] = seenInteraction{runID: e.ResponseID, kind: e.Contract.Kind}
	case InteractionClosed:
		delete(c.seen, e.InteractionID)
	}
}
