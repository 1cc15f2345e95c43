package epp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/xbot-runtime/xbot/services/engine/compute"
)

// retry: an idempotent call the plugin marked retryable is tried this many
// times in all, the waits doubling from retryWait.
const (
	retryAttempts = 3
	retryWait     = 100 * time.Millisecond
)

// request is one call: method, params, where its result goes, how long it
// may take (0: as long as ctx) and what runs on the reader when it answers.
type request struct {
	method   string
	params   any
	result   any
	timeout  time.Duration
	onResult func(json.RawMessage) error
}

// do sends r as request id and waits for the answer. When ctx ends or the
// timeout elapses first it sends $/cancel {id} and returns ctx's error or
// one wrapping ErrTimeout; a late answer is ignored.
func (c *conn) do(ctx context.Context, id int64, r request) error {
	line, err := encode(&id, r.method, r.params)
	if err != nil {
		return err
	}
	cl := &call{method: r.method, answer: make(chan message, 1), onResult: r.onResult}
	c.mu.Lock()
	if c.dead != nil {
		c.mu.Unlock()
		return c.dead
	}
	c.pending[id] = cl
	c.mu.Unlock()
	if err := c.write(ctx, line); err != nil {
		c.abandon(id)
		if ctx.Err() != nil {
			c.cancel(id) // part of it may have gone out: the plugin stops it
			return ctx.Err()
		}
		if dead := c.waitDead(); dead != nil {
			return dead
		}
		return err
	}
	var expired <-chan time.Time
	if r.timeout > 0 {
		t := time.NewTimer(r.timeout)
		defer t.Stop()
		expired = t.C
	}
	select {
	case m := <-cl.answer:
		return c.answered(r, m)
	case <-ctx.Done():
		c.cancel(id)
		return ctx.Err()
	case <-expired:
		c.cancel(id)
		return fmt.Errorf("provider %s: %s did not answer within %v (cancelled): %w", c.cfg.ID, r.method, r.timeout, ErrTimeout)
	}
}

// answered turns an answer into r's result or error.
func (c *conn) answered(r request, m message) error {
	switch {
	case m.JSONRPC == "": // the conn died
		return c.err()
	case m.Error != nil:
		return c.errorOf(r.method, m.Error)
	case r.result == nil || string(m.Result) == "null":
		return nil
	}
	if err := json.Unmarshal(m.Result, r.result); err != nil {
		return fmt.Errorf("provider %s: %s answered a result of the wrong shape: %w", c.cfg.ID, r.method, ErrProvider)
	}
	return nil
}

// waitDead gives a write that failed a moment to learn why: a write to a
// plugin that exited fails before its exit is known.
func (c *conn) waitDead() error {
	t := time.NewTimer(drainGrace + time.Second)
	defer t.Stop()
	select {
	case <-c.done:
		return c.err()
	case <-t.C:
		return nil
	}
}

// abandon forgets a pending request.
func (c *conn) abandon(id int64) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}

// cancel abandons request id and tells the plugin to stop its work. The
// $/cancel is written without making the caller wait (another line may be
// on its way to a slow plugin); write bounds it.
func (c *conn) cancel(id int64) {
	c.abandon(id)
	c.cancelAll([]int64{id})
}

// cancelAll sends $/cancel for each of ids, in order, in the background.
func (c *conn) cancelAll(ids []int64) {
	if c.err() != nil || len(ids) == 0 {
		return
	}
	lines := make([][]byte, 0, len(ids))
	for _, id := range ids {
		if line, err := encode(nil, MCancel, map[string]int64{"id": id}); err == nil {
			c.trace(true, line[:len(line)-1])
			lines = append(lines, line)
		}
	}
	go func() {
		for _, line := range lines {
			if c.send(context.Background(), line) != nil {
				return
			}
		}
	}()
}

// errorOf maps an error object the plugin answered for method.
func (c *conn) errorOf(method string, w *wireError) error {
	e := &Error{Provider: c.cfg.ID, Method: method, Code: w.Code, Message: c.clean.clean(w.Message)}
	if w.Data != nil {
		e.Kind, e.Retryable, e.Suggestion = w.Data.Kind, w.Data.Retryable, c.clean.clean(w.Data.Suggestion)
		if e.Kind == KindLimitExceeded {
			e.Limit = c.limitOf(w.Data.Details)
		}
	}
	if e.Message == "" {
		e.Message = fmt.Sprintf("error %d", w.Code)
	}
	return e
}

// limitOf reads a limit_exceeded error's details; nil when they do not
// name a known resource.
func (c *conn) limitOf(raw json.RawMessage) *compute.LimitError {
	var d limitDetails
	if json.Unmarshal(raw, &d) != nil || d.Limit <= 0 {
		return nil
	}
	switch d.Resource {
	case compute.ResourceMemory, compute.ResourcePids, compute.ResourceWorkspace:
	default:
		return nil
	}
	mech := c.clean.clean(d.Mechanism)
	if mech == "" {
		mech = "provider " + c.cfg.ID
	}
	return &compute.LimitError{Resource: d.Resource, Limit: d.Limit, Mechanism: mech}
}

// retried runs r with a fresh id per attempt, repeating it when the table
// marks its method retried and the plugin's error says retryable.
func (c *conn) retried(ctx context.Context, r request) error {
	m, _ := method(r.method)
	wait := retryWait
	for attempt := 1; ; attempt++ {
		err := c.do(ctx, c.nextID.Add(1), r)
		var e *Error
		if err == nil || !m.Retried || attempt == retryAttempts || !errors.As(err, &e) || !e.Retryable {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		wait *= 2
	}
}
