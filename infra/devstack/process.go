package devstack

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"time"
)

// proc is a started child process and its exit status.
type proc struct {
	cmd    *exec.Cmd
	exited chan struct{} // closed once the process has been reaped
	err    error         // result of cmd.Wait, valid after exited is closed
}

// startLocked starts cmd from a goroutine locked to its OS thread until cmd
// exits. The parent-death signal fires when the thread that forked the child
// ends, not the process; pinning the thread makes it mean "our process died".
func startLocked(cmd *exec.Cmd) (*proc, error) {
	p := &proc{cmd: cmd, exited: make(chan struct{})}
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		p.err = cmd.Wait()
		close(p.exited)
	}()
	if err := <-started; err != nil {
		return nil, fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	return p, nil
}

// runLocked runs cmd to completion like cmd.Run, started by startLocked.
func runLocked(cmd *exec.Cmd) error {
	p, err := startLocked(cmd)
	if err != nil {
		return err
	}
	<-p.exited
	return p.err
}

// killServer sends SIGKILL to process group pgid (0: none) and to every
// other process of the server on pgdata (see leftovers).
func killServer(pgid int, pgdata string) {
	if pgid > 0 {
		err := syscall.Kill(-pgid, syscall.SIGKILL)
		_ = err // ESRCH: the group is already gone, which is what we want
	}
	for _, pid := range leftovers(pgid, pgdata) {
		err := syscall.Kill(pid, syscall.SIGKILL)
		_ = err // as above
	}
}

// serverGonePoll and serverGoneTimeout bound the wait for a server's last
// processes: after the postmaster dies its children notice within
// milliseconds, slower on a loaded machine.
const (
	serverGonePoll    = 10 * time.Millisecond
	serverGoneTimeout = 10 * time.Second
)

// awaitServerGone waits until no process of the server is left (see
// leftovers), sending SIGKILL to stragglers once grace has passed.
func awaitServerGone(pgid int, pgdata string, grace time.Duration) error {
	deadline := time.Now().Add(serverGoneTimeout)
	killAt := time.Now().Add(grace)
	for {
		left := leftovers(pgid, pgdata)
		if len(left) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("server processes %v still alive after SIGKILL", left)
		}
		if !time.Now().Before(killAt) {
			killServer(pgid, pgdata)
		}
		time.Sleep(serverGonePoll)
	}
}

// hardStop kills the server started as p and waits until all of it is gone.
func (p *proc) hardStop(pgdata string) error {
	killServer(p.cmd.Process.Pid, pgdata)
	<-p.exited
	return awaitServerGone(p.cmd.Process.Pid, pgdata, 0)
}

// shutdown asks the server started as p to stop with sig, and kills it if
// it has not exited within stopTimeout or when ctx ends; either way it
// returns once no process of the server on pgdata is left. ignored is
// called before the kill that follows a timeout.
func (p *proc) shutdown(ctx context.Context, sig syscall.Signal, pgdata string, ignored func()) error {
	err := p.cmd.Process.Signal(sig)
	_ = err // os.ErrProcessDone: it already exited; leftovers are handled below
	timer := time.NewTimer(stopTimeout)
	defer timer.Stop()
	select {
	case <-p.exited:
		return awaitServerGone(p.cmd.Process.Pid, pgdata, serverGoneTimeout/2)
	case <-timer.C:
		ignored()
		return p.hardStop(pgdata)
	case <-ctx.Done():
		return p.hardStop(pgdata)
	}
}

// launchRetrying calls launch up to attempts times while it fails with
// exited, the error of a server that ended before it was ready: a port
// picked as free can be taken by another process before the server binds it.
func launchRetrying[T any](attempts int, exited error, launch func() (T, error)) (T, error) {
	var v T
	var err error
	for range max(attempts, 1) {
		if v, err = launch(); !errors.Is(err, exited) {
			break
		}
	}
	return v, err
}

// tailLines is how much of the server log an error carries: enough for the
// FATAL line and its context.
const tailLines = 20

// tail returns the last n lines of b.
func tail(b []byte, n int) string {
	b = bytes.TrimRight(b, "\n")
	for i, cut := len(b)-1, 0; i >= 0; i-- {
		if b[i] == '\n' {
			cut++
			if cut == n {
				return string(b[i+1:])
			}
		}
	}
	return string(b)
}

// fileTail returns the last tailLines lines of f written after offset.
func fileTail(f *os.File, offset int64) string {
	const maxTail = 16 << 10 // a screenful of log lines; never read a huge log whole
	buf, err := lastBytes(f, offset, maxTail)
	if err != nil {
		return "(server log unreadable: " + err.Error() + ")"
	}
	return tail(buf, tailLines)
}

// lastBytes returns what f holds after offset, at most its last n bytes.
func lastBytes(f *os.File, offset, n int64) ([]byte, error) {
	end, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return nil, err
	}
	offset = max(offset, end-n)
	buf := make([]byte, end-offset)
	if _, err := f.ReadAt(buf, offset); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return buf, nil
}
