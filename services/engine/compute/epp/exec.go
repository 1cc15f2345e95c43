package epp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/xbot-runtime/xbot/services/engine/compute"
)

// Bounds of a command's run over EPP.
const (
	// maxStdin bounds a command's standard input, sent whole in stdin_b64.
	maxStdin = 4 << 20
	// cancelWait is how long Exec waits for a cancelled command's exit
	// before it returns anyway: compute.Sandbox promises 2 s.
	cancelWait = 1500 * time.Millisecond
	// exitGrace is how long past its timeout a command may go on before
	// the host cancels it itself (the plugin enforces the timeout).
	exitGrace = 2 * time.Second
	// killTimeout bounds the process.kill calls of Kill and Close.
	killTimeout = 5 * time.Second
)

type execParams struct {
	SandboxID string   `json:"sandbox_id"`
	Run       runScope `json:"run"`
	Cmd       string   `json:"cmd"`
	Cwd       string   `json:"cwd,omitempty"`
	Timeout   float64  `json:"timeout,omitempty"`
	StdinB64  string   `json:"stdin_b64,omitempty"`
	Combined  bool     `json:"combined,omitempty"`
}

func (b *Sandbox) execParams(req compute.ExecRequest) (execParams, error) {
	p := execParams{SandboxID: b.id, Run: b.scope, Cmd: req.Command, Cwd: req.Cwd, Timeout: req.Timeout.Seconds(),
		Combined: sameWriter(req.Stdout, req.Stderr)}
	if req.Stdin != nil {
		in, err := io.ReadAll(io.LimitReader(req.Stdin, maxStdin+1))
		if err != nil {
			return p, fmt.Errorf("exec: stdin: %w", err)
		}
		if len(in) > maxStdin {
			return p, fmt.Errorf("exec: stdin over EPP is at most %s: %w", compute.Bytes(maxStdin), ErrInvalid)
		}
		if len(in) > 0 {
			p.StdinB64 = base64.StdEncoding.EncodeToString(in)
		}
	}
	return p, nil
}

// Exec runs the command: exec.start with streamed output when the plugin
// offers exec.stream, else exec.run. When ctx ends the host sends
// $/cancel for it and returns ctx's error once it exited, at most
// cancelWait later.
func (b *Sandbox) Exec(ctx context.Context, req compute.ExecRequest) (compute.ExecResult, error) {
	if err := b.usable(ctx); err != nil {
		return compute.ExecResult{}, err
	}
	params, err := b.execParams(req)
	if err != nil {
		return compute.ExecResult{}, err
	}
	if b.s.has(featExecStream) {
		return b.execStream(ctx, req, params)
	}
	return b.execRun(ctx, req, params)
}

// execStream runs a command with exec.start.
func (b *Sandbox) execStream(ctx context.Context, req compute.ExecRequest, params execParams) (compute.ExecResult, error) {
	sink := &procSink{stdout: req.Stdout, stderr: req.Stderr, exit: make(chan exitNote, 1)}
	var pid string
	register := func(raw json.RawMessage) error {
		var out struct {
			ProcessID string `json:"process_id"`
		}
		if err := json.Unmarshal(raw, &out); err != nil {
			return err
		}
		pid = out.ProcessID
		return b.s.conn.register(pid, sink)
	}
	if !b.s.features[featExecStream] {
		return compute.ExecResult{}, &FeatureError{Provider: b.s.cfg.ID, Method: MExecStart, Feature: featExecStream}
	}
	start := time.Now()
	id := b.s.conn.nextID.Add(1)
	b.trackRun(id, true) // until it ended: Kill cancels it, answered or not
	defer b.trackRun(id, false)
	err := b.s.conn.do(ctx, id, request{method: MExecStart, params: params, timeout: b.s.cfg.CallTimeout, onResult: register})
	if err != nil {
		return compute.ExecResult{}, fmt.Errorf("exec: %w", b.lostIfGone(err))
	}
	b.track(pid, true)
	defer b.track(pid, false)
	note, err := b.await(ctx, id, pid, sink, req.Timeout)
	res := compute.ExecResult{ExitCode: note.code, TimedOut: note.timedOut, Duration: time.Since(start)}
	if err != nil {
		return res, err
	}
	if note.err != nil {
		return res, b.lostIfGone(note.err)
	}
	if lost := b.lostErr(); lost != nil { // killed by a Destroy
		return res, lost
	}
	return res, nil
}

// await waits for the process's exit, cancelling it when ctx ends or its
// timeout is long past.
func (b *Sandbox) await(ctx context.Context, id int64, pid string, sink *procSink, timeout time.Duration) (exitNote, error) {
	var overdue <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout + exitGrace)
		defer t.Stop()
		overdue = t.C
	}
	select {
	case n := <-sink.exit:
		return n, nil
	case <-b.lostCh:
		b.drain(pid, sink)
		return exitNote{code: -1}, b.lostErr()
	case <-ctx.Done():
		b.s.conn.cancel(id)
		b.drain(pid, sink)
		return exitNote{code: -1}, ctx.Err()
	case <-overdue:
		b.s.conn.cancel(id)
		b.drain(pid, sink)
		return exitNote{code: -1, timedOut: true}, nil
	}
}

// drain waits up to cancelWait for a cancelled process's exit.
func (b *Sandbox) drain(pid string, sink *procSink) {
	t := time.NewTimer(cancelWait)
	defer t.Stop()
	select {
	case <-sink.exit:
	case <-t.C:
		b.s.conn.unregister(pid)
	}
}

type runResult struct {
	ExitCode  int        `json:"exit_code"`
	Stdout    string     `json:"stdout"`
	Stderr    string     `json:"stderr"`
	StdoutB64 *string    `json:"stdout_b64"`
	StderrB64 *string    `json:"stderr_b64"`
	TimedOut  bool       `json:"timed_out"`
	Error     *wireError `json:"error"`
}

// execRun runs a command with exec.run: its output arrives at its end.
func (b *Sandbox) execRun(ctx context.Context, req compute.ExecRequest, params execParams) (compute.ExecResult, error) {
	start := time.Now()
	id := b.s.conn.nextID.Add(1)
	b.trackRun(id, true)
	defer b.trackRun(id, false)
	var out runResult
	timeout := time.Duration(0) // the command's own timeout bounds it, else only ctx
	if req.Timeout > 0 {
		timeout = req.Timeout + exitGrace
	}
	if !b.s.has(featExecRun) {
		return compute.ExecResult{}, &FeatureError{Provider: b.s.cfg.ID, Method: MExecRun, Feature: featExecRun}
	}
	err := b.s.conn.do(ctx, id, request{method: MExecRun, params: params, result: &out, timeout: timeout})
	if err != nil {
		return compute.ExecResult{Duration: time.Since(start)}, fmt.Errorf("exec: %w", b.lostIfGone(err))
	}
	write(req.Stdout, out.Stdout, out.StdoutB64)
	write(req.Stderr, out.Stderr, out.StderrB64)
	res := compute.ExecResult{ExitCode: out.ExitCode, TimedOut: out.TimedOut, Duration: time.Since(start)}
	if out.Error != nil {
		return res, b.lostIfGone(b.s.conn.commandError(MExecRun, out.Error))
	}
	if lost := b.lostErr(); lost != nil {
		return res, lost
	}
	return res, nil
}

// sameWriter reports whether a and b are one writer (then the plugin keeps
// the streams' order in one pipe).
func sameWriter(a, b io.Writer) (same bool) {
	defer func() {
		if recover() != nil {
			same = false // uncomparable dynamic type
		}
	}()
	return a != nil && a == b
}

// write gives w the exact bytes when the plugin sent them, else the text.
func write(w io.Writer, text string, b64 *string) {
	if w == nil {
		return
	}
	if b64 != nil {
		if data, err := base64.StdEncoding.DecodeString(*b64); err == nil {
			_, _ = w.Write(data)
			return
		}
	}
	_, _ = io.WriteString(w, text)
}

func (b *Sandbox) track(pid string, running bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if running {
		b.live[pid] = struct{}{}
	} else {
		delete(b.live, pid)
	}
}

func (b *Sandbox) trackRun(id int64, running bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if running {
		b.runs[id] = struct{}{}
	} else {
		delete(b.runs, id)
	}
}

// Kill kills every command the handle runs: $/cancel for each exec.run
// and exec.start request (an exec.start whose answer is still on its way
// has a process that nothing else names yet), and process.kill for each
// started process.
func (b *Sandbox) Kill() error {
	b.mu.Lock()
	pids := make([]string, 0, len(b.live))
	for pid := range b.live {
		pids = append(pids, pid)
	}
	runs := make([]int64, 0, len(b.runs))
	for id := range b.runs {
		runs = append(runs, id)
	}
	b.mu.Unlock()
	b.s.conn.cancelAll(runs)
	ctx, cancel := context.WithTimeout(context.Background(), killTimeout)
	defer cancel()
	var firstErr error
	for _, pid := range pids {
		var out struct {
			Killed bool `json:"killed"`
		}
		err := b.s.call(ctx, MProcessKill, map[string]string{"sandbox_id": b.id, "pid": pid}, &out, 0)
		if err != nil && firstErr == nil && b.s.conn.err() == nil {
			firstErr = fmt.Errorf("kill: %w", err)
		}
	}
	return firstErr
}

// Close kills what the handle runs and ends its plugin process; the
// sandbox remains.
func (b *Sandbox) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	b.mu.Unlock()
	_ = b.Kill()
	b.s.close()
	b.p.untrack(b.key, b)
	b.discard()
	return nil
}
