package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
)

// ErrStreamIdle says a stream's connection sent nothing, not even a
// keep-alive, for StreamOptions.IdleTimeout: it was dropped and the stream
// reconnected after the last chunk received (the error is yielded only when
// the reconnects run out).
var ErrStreamIdle = errors.New("stream connection silent for too long")

// idleWatch ends a connection's context when the connection stays silent
// for a while: its timer restarts on every read that returns bytes, and is
// held while the loop handles a chunk.
type idleWatch struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	after  time.Duration
	mu     sync.Mutex
	timer  *time.Timer // nil when the watch is off
}

// watch returns the context of one connection and its watch; after <= 0
// watches nothing.
func watch(ctx context.Context, after time.Duration) (context.Context, *idleWatch) {
	ctx, cancel := context.WithCancelCause(ctx)
	w := &idleWatch{ctx: ctx, cancel: cancel, after: after}
	if after > 0 {
		w.timer = time.AfterFunc(after, func() { cancel(ErrStreamIdle) })
	}
	return ctx, w
}

// stop ends the watch and the connection's context.
func (w *idleWatch) stop() {
	w.pause()
	w.cancel(nil)
}

func (w *idleWatch) pause() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.timer != nil {
		w.timer.Stop()
	}
}

func (w *idleWatch) resume() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.timer != nil {
		w.timer.Reset(w.after)
	}
}

// explain is err, said to be ErrStreamIdle when the watch ended the
// connection.
func (w *idleWatch) explain(err error) error {
	if cause := context.Cause(w.ctx); errors.Is(cause, ErrStreamIdle) && !errors.Is(err, ErrStreamIdle) {
		return fmt.Errorf("%w after %s: %w", ErrStreamIdle, w.after, err)
	}
	return err
}

// reader is r, restarting the watch's timer whenever it returns bytes.
func (w *idleWatch) reader(r io.Reader) io.Reader { return idleReader{r: r, w: w} }

type idleReader struct {
	r io.Reader
	w *idleWatch
}

func (r idleReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if n > 0 {
		r.w.resume()
	}
	return n, err
}
