package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"time"

	"github.com/xbot-runtime/xbot/services/compute"
)

// Exec runs req.Command through the Launcher in a session of its own.
// When ctx ends, the timeout elapses or Kill is called, the group receives
// SIGKILL; when the shell exits, what it left in its group is killed too.
func (b *Box) Exec(ctx context.Context, req compute.ExecRequest) (compute.ExecResult, error) {
	if err := b.usable(ctx); err != nil {
		return compute.ExecResult{}, err
	}
	cwd, err := b.cwd(req.Cwd)
	if err != nil {
		return compute.ExecResult{}, fmt.Errorf("exec: cwd %s: %w", req.Cwd, err)
	}
	cmd, err := b.launch(Launch{Layout: b.layout, Command: req.Command, Cwd: cwd,
		Network: b.spec.Network, AllowHosts: b.spec.AllowHosts, Env: b.spec.Env})
	if err != nil {
		return compute.ExecResult{}, fmt.Errorf("exec: %w", err)
	}
	streams, err := attach(cmd, req)
	if err != nil {
		closeExtraFiles(cmd)
		return compute.ExecResult{}, fmt.Errorf("exec: %w", err)
	}
	start := time.Now()
	err = b.start(cmd)
	streams.started()
	if err != nil {
		streams.finish()
		return compute.ExecResult{}, fmt.Errorf("exec: %w", err)
	}
	pgid := cmd.Process.Pid
	w := watch(ctx, req.Timeout, pgid)
	waitErr := cmd.Wait()
	why := w.stop()
	killGroup(pgid)
	b.finished(pgid)
	streams.finish()
	res := compute.ExecResult{ExitCode: exitCode(cmd), Duration: time.Since(start), TimedOut: why == byTimeout}
	var exitErr *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &exitErr) {
		return res, fmt.Errorf("exec: %w", waitErr)
	}
	if why == byContext {
		return res, ctx.Err()
	}
	return res, nil
}

// cause is why a watcher killed the group.
type cause int

const (
	notKilled cause = iota
	byContext
	byTimeout
)

// watcher kills a process group when its context ends or its timeout
// elapses, whichever comes first, until stopped.
type watcher struct {
	stopped chan struct{}
	done    chan struct{}
	why     cause // written before done is closed
}

func watch(ctx context.Context, timeout time.Duration, pgid int) *watcher {
	w := &watcher{stopped: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		var expired <-chan time.Time
		if timeout > 0 {
			t := time.NewTimer(timeout)
			defer t.Stop()
			expired = t.C
		}
		select {
		case <-ctx.Done():
			w.why = byContext
		case <-expired:
			w.why = byTimeout
		case <-w.stopped:
			return
		}
		killGroup(pgid)
	}()
	return w
}

// stop ends the watch and reports whether, and why, it killed the group.
func (w *watcher) stop() cause {
	close(w.stopped)
	<-w.done
	return w.why
}
