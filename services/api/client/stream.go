package client

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"time"
)

// StreamOptions choose where a UI message stream starts and how long it
// keeps reconnecting.
type StreamOptions struct {
	// After is the EventID of the last chunk already received: the stream
	// continues right after it. Empty: the stream's own start (a run from
	// its first chunk; a session at its first reply that has not ended).
	After string
	// MaxReconnects bounds the reconnections in a row that deliver no
	// chunk before the stream gives up with the last error. Default 8,
	// with waits growing to Config.Retry.MaxDelay: enough to ride out an API
	// restart.
	MaxReconnects int
	// IdleTimeout is how long a connection may stay silent — no chunk, not
	// even the API's keep-alive comment — before the stream takes it for
	// dead and reconnects with Last-Event-ID: a connection a proxy or a NAT
	// dropped without a reset never ends by itself. Time the loop spends on
	// a chunk does not count. Default 60 s (the API sends a keep-alive every
	// 15 s by default); negative: never.
	IdleTimeout time.Duration
}

// defaultMaxReconnects is StreamOptions.MaxReconnects' default.
const defaultMaxReconnects = 8

// defaultIdleTimeout is StreamOptions.IdleTimeout's default: four of the
// API's default keep-alive intervals, so a slow keep-alive is no reason to
// reconnect.
const defaultIdleTimeout = 60 * time.Second

// RunChunks yields the chunks of the run's reply (GET /v1/runs/{runId}/stream)
// in order, until the reply has ended (the stream's data: [DONE]). A
// connection that drops, or an API that restarts, is reconnected with
// Last-Event-ID set to the last chunk yielded, so the loop sees every
// chunk exactly once, without a gap. An error — the API refusing the stream
// (a *Problem), a chunk that does not decode, ctx ending, or the reconnects
// running out — is yielded once, last.
func (c *Client) RunChunks(ctx context.Context, runID string, opts StreamOptions) iter.Seq2[Chunk, error] {
	return c.chunks(ctx, "/v1/runs/"+url.PathEscape(runID)+"/stream", opts)
}

// SessionChunks yields the chunks of the session's replies (GET
// /v1/sessions/{platformSessionId}/stream) in order, one reply after the
// other, for as long as the loop runs: a session stream does not end. It
// resumes and fails as RunChunks does.
func (c *Client) SessionChunks(ctx context.Context, sessionID string, opts StreamOptions) iter.Seq2[Chunk, error] {
	return c.chunks(ctx, "/v1/sessions/"+url.PathEscape(sessionID)+"/stream", opts)
}

// errStopped ends readEvents when the loop stopped asking for chunks.
var errStopped = errors.New("the loop stopped")

func (c *Client) chunks(ctx context.Context, path string, opts StreamOptions) iter.Seq2[Chunk, error] {
	if opts.MaxReconnects <= 0 {
		opts.MaxReconnects = defaultMaxReconnects
	}
	if opts.IdleTimeout == 0 {
		opts.IdleTimeout = defaultIdleTimeout
	}
	return func(yield func(Chunk, error) bool) {
		s := &resumable{c: c, path: path, last: opts.After, idle: opts.IdleTimeout, yield: yield}
		for fails := 0; ; {
			progressed, err := s.once(ctx)
			switch {
			case err == nil || errors.Is(err, errStopped):
				return
			case ctx.Err() != nil:
				yield(Chunk{}, fmt.Errorf("stream %s: %w", path, ctx.Err()))
				return
			case !reconnectable(err):
				yield(Chunk{}, err)
				return
			}
			if progressed {
				fails = 0
			}
			if fails++; fails > opts.MaxReconnects {
				yield(Chunk{}, fmt.Errorf("stream %s: gave up after %d reconnects: %w", path, opts.MaxReconnects, err))
				return
			}
			if err := sleep(ctx, c.cfg.Retry.delay(fails, retryAfterOf(err))); err != nil {
				yield(Chunk{}, fmt.Errorf("stream %s: %w", path, err))
				return
			}
		}
	}
}

// resumable is one stream across its connections.
type resumable struct {
	c     *Client
	path  string
	last  string // the EventID of the last chunk yielded
	idle  time.Duration
	yield func(Chunk, error) bool
}

// once opens the stream after s.last and yields its chunks until it ends:
// nil after data: [DONE], errStopped when the loop stopped, else why the
// connection ended (ErrStreamEnded when it closed early, ErrStreamIdle when
// it went silent). progressed says a chunk was yielded.
func (s *resumable) once(ctx context.Context) (progressed bool, err error) {
	ctx, w := watch(ctx, s.idle)
	defer w.stop()
	var hdr []string
	if s.last != "" {
		hdr = []string{"Last-Event-ID", s.last}
	}
	resp, err := s.c.send(ctx, http.MethodGet, s.path, nil, hdr...)
	if err != nil {
		return false, w.explain(err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return false, streamRefused(readProblem(http.MethodGet, s.path, resp), resp.Header)
	}
	err = readEvents(w.reader(resp.Body), func(ev StreamEvent) error {
		ch, err := parseChunk(ev)
		if err != nil {
			return &badChunkError{err}
		}
		w.pause() // the loop's own time is not the connection's silence
		more := s.yield(ch, nil)
		w.resume()
		if !more {
			return errStopped
		}
		if ev.ID != "" {
			s.last = ev.ID
		}
		progressed = true
		return nil
	})
	if err != nil && !errors.Is(err, errStopped) {
		err = fmt.Errorf("stream %s after %q: %w", s.path, s.last, w.explain(err))
	}
	return progressed, err
}

// badChunkError is a chunk that does not decode: reconnecting would only
// read it again.
type badChunkError struct{ err error }

func (e *badChunkError) Error() string { return e.err.Error() }
func (e *badChunkError) Unwrap() error { return e.err }

// refusedStream is an answer other than 200 to a stream request, with the
// Retry-After it came with.
type refusedStream struct {
	err        error
	retryAfter time.Duration
}

func (e *refusedStream) Error() string { return e.err.Error() }
func (e *refusedStream) Unwrap() error { return e.err }

func streamRefused(err error, h http.Header) error {
	return &refusedStream{err: err, retryAfter: retryAfter(h)}
}

func retryAfterOf(err error) time.Duration {
	var r *refusedStream
	if errors.As(err, &r) {
		return r.retryAfter
	}
	return 0
}

// reconnectable reports whether opening the stream again may cure err: a
// broken or refused connection, or a refusal the server means to be
// temporary (429 too many streams, 5xx); not a 4xx, and not a chunk that
// does not decode.
func reconnectable(err error) bool {
	var bad *badChunkError
	if errors.As(err, &bad) {
		return false
	}
	var p *Problem
	if errors.As(err, &p) {
		return p.Status == http.StatusTooManyRequests || p.Status >= 500
	}
	return true
}
