package postgres

import (
	"context"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"
)

// Listener timing. The re-check bounds how late WaitCommand can be when a
// notification is lost (listener reconnecting); the backoff keeps a server
// that refuses connections from being hammered.
const (
	recheckInterval   = 200 * time.Millisecond
	minListenBackoff  = 100 * time.Millisecond
	maxListenBackoff  = 5 * time.Second
	closeListenerWait = 5 * time.Second // bound on the UNLISTEN/terminate exchange at shutdown
)

// listener holds one LISTEN connection per Store and fans notifications out
// to the WaitCommand calls waiting for that command id. It starts on the
// first subscription.
type listener struct {
	pool *pgxpool.Pool
	log  *zap.Logger

	mu      sync.Mutex
	waiters map[string]map[chan struct{}]struct{}
	started bool
	closed  bool
	cancel  context.CancelFunc
	done    chan struct{}
}

func newListener(pool *pgxpool.Pool, log *zap.Logger) *listener {
	return &listener{pool: pool, log: log, waiters: make(map[string]map[chan struct{}]struct{})}
}

// subscribe returns a channel that receives a value whenever a notification
// for commandID arrives (or notifications may have been lost), and a
// function that ends the subscription.
func (l *listener) subscribe(commandID string) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.started && !l.closed {
		ctx, cancel := context.WithCancel(context.Background())
		l.started, l.cancel, l.done = true, cancel, make(chan struct{})
		go l.run(ctx)
	}
	set := l.waiters[commandID]
	if set == nil {
		set = make(map[chan struct{}]struct{})
		l.waiters[commandID] = set
	}
	set[ch] = struct{}{}
	return ch, func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		// ch is in the current set: a set is only dropped once empty.
		cur := l.waiters[commandID]
		delete(cur, ch)
		if len(cur) == 0 {
			delete(l.waiters, commandID)
		}
	}
}

// wake signals the waiters of commandID, or every waiter if commandID is "".
func (l *listener) wake(commandID string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for id, set := range l.waiters {
		if commandID != "" && id != commandID {
			continue
		}
		for ch := range set {
			select {
			case ch <- struct{}{}:
			default: // a wake-up is already pending
			}
		}
	}
}

// run keeps a LISTEN connection open until ctx ends, reconnecting with
// backoff after a failure.
func (l *listener) run(ctx context.Context) {
	defer close(l.done)
	backoff := minListenBackoff
	for {
		err := l.listen(ctx, func() { backoff = minListenBackoff })
		if ctx.Err() != nil {
			return
		}
		l.log.Warn("command outcome listener failed; reconnecting", zap.Error(err), zap.Duration("backoff", backoff))
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, maxListenBackoff)
	}
}

// listen opens a connection, LISTENs and dispatches notifications until an
// error or ctx ends. connected is called once LISTEN is in effect.
func (l *listener) listen(ctx context.Context, connected func()) error {
	conn, err := pgx.ConnectConfig(ctx, l.pool.Config().ConnConfig)
	if err != nil {
		return err
	}
	defer func() {
		closeCtx, cancel := context.WithTimeout(context.Background(), closeListenerWait)
		defer cancel()
		_ = conn.Close(closeCtx) // the connection is being dropped; nothing to recover
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+NotifyChannel); err != nil {
		return err
	}
	connected()
	l.wake("") // outcomes committed while no connection listened were missed
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		l.wake(n.Payload)
	}
}

// close stops the listener and waits for it to end.
func (l *listener) close() {
	l.mu.Lock()
	l.closed = true
	started, cancel, done := l.started, l.cancel, l.done
	l.mu.Unlock()
	if started {
		cancel()
		<-done
	}
}
