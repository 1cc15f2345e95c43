package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"syscall"
	"time"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/engine/compute"
)

// Exec runs req.Command through the Launcher in a session of its own.
// When ctx ends, the timeout elapses or Kill is called, the group receives
// SIGKILL; when the shell exits, what it left in its group is killed too.
// A command that hit a limit of the sandbox returns its result and a
// *compute.LimitError.
func (b *Box) Exec(ctx context.Context, req compute.ExecRequest) (compute.ExecResult, error) {
	if err := b.usable(ctx); err != nil {
		return compute.ExecResult{}, err
	}
	if err := b.ensure(b.commandMounts(req.Cwd)...); err != nil {
		return compute.ExecResult{}, fmt.Errorf("exec: %w", err)
	}
	cwd, err := b.cwd(req.Cwd)
	if err != nil {
		return compute.ExecResult{}, fmt.Errorf("exec: cwd %s: %w", req.Cwd, err)
	}
	cmd, err := b.launch(Launch{Layout: b.layout, Command: req.Command, Cwd: cwd,
		Network: b.spec.Network, AllowHosts: b.spec.AllowHosts, Env: b.spec.Env,
		WritableRoot: b.spec.SafetyMode == events.SafetyDangerFullAccess, FirstFD: b.limits.firstFD(),
		Companion: b.companion})
	if err != nil {
		if lerr := b.lostNow(); lerr != nil { // destroyed as its companion started
			return compute.ExecResult{}, lerr
		}
		return compute.ExecResult{}, fmt.Errorf("exec: %w", err)
	}
	pl, err := b.limits.prepare(cmd)
	if err != nil {
		closeExtraFiles(cmd)
		return compute.ExecResult{}, fmt.Errorf("exec: %w", err)
	}
	streams, err := attach(cmd, req)
	if err != nil {
		pl.abort()
		_ = pl.finish(0) // it never ran: no limit to report
		return compute.ExecResult{}, fmt.Errorf("exec: %w", err)
	}
	return b.run(ctx, cmd, pl, streams, req.Timeout)
}

// commandMounts are the directories a command in cwd may use: all of the
// run's, or with host paths its cwd's, /workspace and the run's tmp.
func (b *Box) commandMounts(cwd string) []Mount {
	ms := b.layout.mounts
	if !b.hostPaths {
		return ms
	}
	need := []Mount{ms[0], ms[len(ms)-1]} // /workspace, tmp (newLayout's order)
	if m, _, err := b.layout.resolve(cwd); err == nil {
		need = append(need, m)
	}
	return need
}

// run starts the prepared command, waits for it and reports how it ended.
func (b *Box) run(ctx context.Context, cmd *exec.Cmd, pl *placement, streams *stdio, timeout time.Duration) (compute.ExecResult, error) {
	start := time.Now()
	err := b.start(cmd, pl)
	streams.started()
	if err != nil && cmd.Process == nil {
		pl.abort()
		_ = pl.finish(0) // it never ran: no limit to report
		streams.finish()
		if lerr := b.lostNow(); lerr != nil {
			return compute.ExecResult{}, lerr
		}
		return compute.ExecResult{}, fmt.Errorf("exec: %w", err)
	}
	pgid := cmd.Process.Pid
	w := watch(ctx, timeout, b.limits.overUsage(b.layout, b.meter), func() { killGroup(pgid); pl.kill() })
	waitErr := cmd.Wait()
	why := w.stop()
	killGroup(pgid)
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	hit := pl.finish(ws)
	b.finished(pgid)
	streams.finish()
	res := compute.ExecResult{ExitCode: exitCode(cmd), Duration: time.Since(start), TimedOut: why == byTimeout}
	if why == byContext {
		return res, ctx.Err()
	}
	// A command whose sandbox was destroyed or deleted under it (and its
	// processes killed, maybe while it was being placed) ended for that
	// reason, whatever else went wrong. The handle is marked destroyed
	// before its commands are killed.
	if lerr := b.lostNow(); lerr != nil {
		return res, lerr
	}
	var exitErr *exec.ExitError
	switch {
	case err != nil: // started, but could not be placed: it never ran
		return res, fmt.Errorf("exec: %w", err)
	case waitErr != nil && !errors.As(waitErr, &exitErr):
		return res, fmt.Errorf("exec: %w", waitErr)
	}
	if hit != nil {
		return res, hit
	}
	if why == byUsage {
		return res, &compute.LimitError{Resource: compute.ResourceWorkspace, Limit: b.limits.limits.WorkspaceBytes, Mechanism: mechUsage}
	}
	if werr := b.limits.checkUsage(b.layout, b.meter); werr != nil {
		return res, werr
	}
	return res, nil
}

// cause is why a watcher killed the group.
type cause int

const (
	notKilled cause = iota
	byContext
	byTimeout
	byUsage // the key went over its workspace limit
)

// watcher kills a command when its context ends, its timeout elapses or
// (with a workspace limit) the key's usage goes over the limit, whichever
// comes first, until stopped.
type watcher struct {
	stopped chan struct{}
	done    chan struct{}
	why     cause // written before done is closed
}

// The usage of a command's key is checked while it runs, so that a command
// writing past the workspace limit is stopped then, not only checked once
// it ended (when it may have filled the disk): every usagePoll, or, when
// the check itself took longer than a usagePollShare of that, as seldom as
// keeps it to that share of a processor (a key of many files, whose walk
// usageMeter spaces out too).
const (
	usagePoll      = time.Second
	usagePollShare = 100
)

// watch starts the watcher of a command; over, when not nil, reports
// whether the key is over its workspace limit.
func watch(ctx context.Context, timeout time.Duration, over func() bool, kill func()) *watcher {
	w := &watcher{stopped: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		if w.why = w.wait(ctx, timeout, over); w.why != notKilled {
			kill()
		}
	}()
	return w
}

// wait waits until the command is to be killed, and says why, or the
// watcher is stopped (notKilled).
func (w *watcher) wait(ctx context.Context, timeout time.Duration, over func() bool) cause {
	var expired, polled <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		expired = t.C
	}
	var poll *time.Timer
	if over != nil {
		poll = time.NewTimer(usagePoll)
		defer poll.Stop()
		polled = poll.C
	}
	for {
		select {
		case <-ctx.Done():
			return byContext
		case <-expired:
			return byTimeout
		case <-polled:
			start := time.Now()
			if over() {
				return byUsage
			}
			poll.Reset(max(usagePoll, usagePollShare*time.Since(start)))
		case <-w.stopped:
			return notKilled
		}
	}
}

// stop ends the watch and reports whether, and why, it killed the group.
func (w *watcher) stop() cause {
	close(w.stopped)
	<-w.done
	return w.why
}
