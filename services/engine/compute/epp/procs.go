package epp

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"

	"go.uber.org/zap"
)

// procSink receives a started process's output and its exit.
type procSink struct {
	stdout, stderr io.Writer // nil: discarded
	exit           chan exitNote
}

// exitNote is how a process ended: its exit, or err when the plugin died.
type exitNote struct {
	code     int
	timedOut bool
	err      error
}

type outputNote struct {
	ProcessID string `json:"process_id"`
	Stream    string `json:"stream"`
	DataB64   string `json:"data_b64"`
}

type exitParams struct {
	ProcessID string     `json:"process_id"`
	ExitCode  int        `json:"exit_code"`
	TimedOut  bool       `json:"timed_out"`
	Error     *wireError `json:"error"`
}

// Early notifications: a plugin should answer exec.start before any output
// of the process, but one that does not still loses nothing — up to
// earlyLimit notifications holding at most earlyBytes of output params,
// held until the answer names their process. Beyond that they are dropped:
// a plugin cannot make the host keep more (8 MiB lines of output of
// processes it never names would otherwise pile up).
const (
	earlyLimit = 256
	earlyBytes = 1 << 20
)

// register adds the sink of process id and delivers what arrived for it
// early; it fails when the conn is dead. It runs on the reader.
func (c *conn) register(id string, s *procSink) error {
	c.mu.Lock()
	if c.dead != nil {
		c.mu.Unlock()
		return c.dead
	}
	if id == "" || c.procs[id] != nil {
		c.mu.Unlock()
		return errors.New("exec.start answered an empty or repeated process_id")
	}
	c.procs[id] = s
	var early, rest []message
	for _, e := range c.early {
		var n struct {
			ProcessID string `json:"process_id"`
		}
		if json.Unmarshal(e.Params, &n) == nil && n.ProcessID == id {
			early = append(early, e)
			c.earlyBytes -= earlySize(e)
		} else {
			rest = append(rest, e)
		}
	}
	c.early = rest
	c.mu.Unlock()
	for _, m := range early {
		_ = c.processNote(m)
	}
	return nil
}

// unregister forgets process id (its exit will not be waited for).
func (c *conn) unregister(id string) {
	c.mu.Lock()
	delete(c.procs, id)
	c.mu.Unlock()
}

// processNote delivers exec.output and exec.exit, in the order read. A
// notification of a process not registered yet is kept (keepEarly).
func (c *conn) processNote(m message) error {
	if m.Method == MExecOutput {
		c.output(m)
		return nil
	}
	var n exitParams
	if json.Unmarshal(m.Params, &n) != nil {
		return nil
	}
	c.mu.Lock()
	s := c.procs[n.ProcessID]
	delete(c.procs, n.ProcessID)
	if s == nil {
		c.keepEarly(m)
	}
	c.mu.Unlock()
	if s == nil {
		return nil
	}
	note := exitNote{code: n.ExitCode, timedOut: n.TimedOut}
	if n.Error != nil {
		note.err = c.commandError(MExecStart, n.Error)
	}
	s.exit <- note
	return nil
}

// output writes an exec.output's bytes to its process's writer.
func (c *conn) output(m message) {
	var n outputNote
	if json.Unmarshal(m.Params, &n) != nil {
		return
	}
	c.mu.Lock()
	s := c.procs[n.ProcessID]
	if s == nil {
		c.keepEarly(m)
	}
	c.mu.Unlock()
	data, err := base64.StdEncoding.DecodeString(n.DataB64)
	if s == nil || err != nil {
		return
	}
	w := s.stdout
	if n.Stream == "stderr" {
		w = s.stderr
	}
	if w != nil {
		_, _ = w.Write(data)
	}
}

// keepEarly holds a notification of a process not (yet) registered, within
// the bounds; c.mu is held.
func (c *conn) keepEarly(m message) {
	size := earlySize(m)
	if len(c.early) >= earlyLimit || c.earlyBytes+size > earlyBytes {
		if !c.earlyDropped { // once: a plugin cannot flood the log either
			c.earlyDropped = true
			c.log.Warn("dropping notifications of processes the plugin has not named yet", zap.String("provider", c.cfg.ID))
		}
		return
	}
	c.early = append(c.early, m)
	c.earlyBytes += size
}

// earlySize is what an early notification counts against earlyBytes: an
// output's params (an exit is small; earlyLimit bounds those).
func earlySize(m message) int {
	if m.Method != MExecOutput {
		return 0
	}
	return len(m.Params)
}

// commandError maps the error a command's end carries: a limit it hit is
// the *compute.LimitError itself.
func (c *conn) commandError(method string, w *wireError) error {
	err := c.errorOf(method, w)
	var e *Error
	if errors.As(err, &e) && e.Limit != nil {
		return e.Limit
	}
	return err
}
