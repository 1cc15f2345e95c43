package epp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"

	"go.uber.org/zap"
)

// conn is the JSON-RPC side of one plugin process: it writes requests and
// notifications, reads answers and notifications in order, and fails
// everything that waits once the process is gone.
type conn struct {
	cfg    *Config
	proc   *process
	clean  *redactor
	log    *zap.Logger
	nextID atomic.Int64
	// session numbers this conn among the process's (TraceEvent).
	session int64

	wturn chan struct{} // one line at a time on stdin: held by the writer

	failOnce  sync.Once
	violation atomic.Pointer[error] // why the host killed the plugin (a protocol violation, a hang)

	mu      sync.Mutex
	pending map[int64]*call
	procs   map[string]*procSink // started processes by process_id
	early   []message            // notifications of processes not registered yet (procs.go)
	// earlyBytes is the size of the early output notifications' params;
	// earlyDropped says some were dropped.
	earlyBytes   int
	earlyDropped bool
	dead         error         // why the conn is dead; set once
	done         chan struct{} // closed when dead is set

	readDone chan struct{} // closed when stdout is read to its end
	closing  bool          // shutdown began: an exit is no crash
}

// sessions counts the conns of this process.
var sessions atomic.Int64

// call is a request waiting for its answer. onResult, if set, runs on the
// reader's goroutine before any later line is read (exec.start registers
// its process there, so that none of its output is missed).
type call struct {
	method   string
	answer   chan message
	onResult func(json.RawMessage) error
}

// newConn starts reading the plugin's stdout.
func newConn(cfg *Config, proc *process, clean *redactor) *conn {
	c := &conn{cfg: cfg, proc: proc, clean: clean, log: cfg.Logger, session: sessions.Add(1),
		pending: map[int64]*call{}, procs: map[string]*procSink{}, done: make(chan struct{}),
		readDone: make(chan struct{}), wturn: make(chan struct{}, 1)}
	go c.read()
	go func() {
		<-proc.exited
		<-c.readDone
		<-proc.stderrDone
		c.fail()
	}()
	return c
}

// read delivers each line of stdout until EOF or a protocol violation,
// which kills the plugin.
func (c *conn) read() {
	defer close(c.readDone)
	lines := newLineReader(c.proc, MaxMessageBytes)
	for {
		line, err := lines.next()
		if err == nil {
			c.trace(false, line)
			var m message
			if m, err = decode(line); err == nil {
				err = c.dispatch(m)
			}
		}
		if err != nil {
			if errors.Is(err, ErrProtocol) {
				c.kill(err)
			}
			return
		}
	}
}

// dispatch hands one message to its waiter.
func (c *conn) dispatch(m message) error {
	switch {
	case m.Method != "" && len(m.ID) > 0:
		// A plugin sends notifications only.
		return c.reply(m.ID, CodeMethodNotFound, "the host serves no methods")
	case m.Method != "":
		return c.notification(m)
	}
	id, err := strconv.ParseInt(string(m.ID), 10, 64)
	c.mu.Lock()
	cl, ok := c.pending[id]
	delete(c.pending, id)
	c.mu.Unlock()
	if err != nil || !ok {
		c.log.Debug("ignoring an answer to no pending request", zap.String("provider", c.cfg.ID))
		return nil
	}
	if m.Error == nil && cl.onResult != nil {
		if err := cl.onResult(m.Result); err != nil {
			m.Result, m.Error = nil, &wireError{Code: CodeInternal, Message: err.Error()}
		}
	}
	cl.answer <- m
	return nil
}

// reply answers a request of the plugin with an error.
func (c *conn) reply(id json.RawMessage, code int, msg string) error {
	line, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg}})
	if err != nil {
		return err
	}
	return c.write(context.Background(), append(line, '\n'))
}

// notification handles log, progress, exec.output and exec.exit; others
// are ignored.
func (c *conn) notification(m message) error {
	switch m.Method {
	case MExecOutput, MExecExit:
		return c.processNote(m)
	case MLog, MProgress:
		var n struct {
			Level   string `json:"level"`
			Message string `json:"message"`
		}
		if json.Unmarshal(m.Params, &n) == nil {
			c.log.Debug("provider "+m.Method, zap.String("provider", c.cfg.ID), zap.String("level", n.Level),
				zap.String("message", c.clean.clean(n.Message)))
		}
	}
	return nil
}

// write writes one line whole. It gives up when ctx ends first — before
// any of the line went out, or else once the rest of it went out in the
// background (so that the plugin's input stays framed) — returning ctx's
// error; and it kills a plugin that took no input for the call timeout,
// which is hung.
func (c *conn) write(ctx context.Context, line []byte) error {
	c.trace(true, line[:len(line)-1])
	return c.send(ctx, line)
}

// send is write without the trace.
func (c *conn) send(ctx context.Context, line []byte) error {
	select {
	case c.wturn <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	n, err := c.proc.writeLine(ctx, line, c.cfg.CallTimeout)
	if err != nil && ctx.Err() != nil && n > 0 && errors.Is(err, os.ErrDeadlineExceeded) {
		rest := context.WithoutCancel(ctx) // the caller is gone; the line must still end
		go func() {                        // the rest, then the turn is the next writer's
			defer func() { <-c.wturn }()
			_, err := c.proc.writeLine(rest, line[n:], c.cfg.CallTimeout)
			_ = c.written(rest, err) // nobody waits for it; a hung plugin is killed
		}()
		return ctx.Err()
	}
	defer func() { <-c.wturn }()
	return c.written(ctx, err)
}

// written is the outcome of a write that ended with err: a plugin that
// took no input for the call timeout is killed as hung.
func (c *conn) written(ctx context.Context, err error) error {
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(err, os.ErrDeadlineExceeded):
		c.kill(fmt.Errorf("it took no input for %v: %w", c.cfg.CallTimeout, ErrTimeout))
	}
	return fmt.Errorf("provider %s: write to the plugin: %w", c.cfg.ID, err)
}

// kill kills the plugin for cause, which its waiters' *ExitError reports.
func (c *conn) kill(cause error) {
	c.violation.CompareAndSwap(nil, &cause)
	c.proc.kill()
}

// fail makes the conn dead — its process exited and its output was read —
// failing every waiter with the exit (or the violation that killed it).
func (c *conn) fail() {
	c.failOnce.Do(func() {
		var cause error
		if v := c.violation.Load(); v != nil {
			cause = *v
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		if cause == nil && c.closing {
			c.dead = fmt.Errorf("provider %s: the session is closed: %w", c.cfg.ID, ErrPluginExited)
		} else {
			c.dead = &ExitError{Provider: c.cfg.ID, Status: c.proc.status, Cause: cause,
				Stderr: tail(c.clean.clean(c.proc.stderr.String()), stderrShown)} // redacted whole, then cut
		}
		close(c.done)
		for id, cl := range c.pending {
			delete(c.pending, id)
			cl.answer <- message{}
		}
		for id, p := range c.procs {
			delete(c.procs, id)
			p.exit <- exitNote{err: c.dead}
		}
	})
}

// err returns why the conn is dead, or nil.
func (c *conn) err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dead
}

// trace hands a line to Config.Trace.
func (c *conn) trace(sent bool, line []byte) {
	if c.cfg.Trace != nil {
		c.cfg.Trace(TraceEvent{Session: c.session, Sent: sent, Message: append([]byte(nil), line...)})
	}
}

// markClosing says that the plugin's exit from now on is the end of the
// session, not a crash.
func (c *conn) markClosing() {
	c.mu.Lock()
	c.closing = true
	c.mu.Unlock()
}
