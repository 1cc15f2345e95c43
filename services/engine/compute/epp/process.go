package epp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Shutdown's grace periods: after stdin closes the plugin has 3 s to exit,
// after SIGTERM 3 s more, then SIGKILL.
const (
	stdinGrace = 3 * time.Second
	termGrace  = 3 * time.Second
	// drainGrace bounds reading stdout and stderr after the plugin exited,
	// when something that left its process group still holds them and is
	// silent; drainLimit when it goes on writing: what the plugin wrote
	// before its exit (a pipe's worth) is read long before.
	drainGrace = time.Second
	drainLimit = 5 * time.Second
)

// process is one running plugin in a process group of its own.
type process struct {
	cmd    *exec.Cmd
	pgid   int
	stdin  *os.File // the write end, with deadlines (writeLine)
	stdout *os.File // the read ends
	errOut *os.File
	stderr *ring
	exited chan struct{} // closed once it exited and its group was killed
	// stderrDone is closed when stderr is read to its end.
	stderrDone chan struct{}
	// progress counts the bytes read from stdout and stderr.
	progress atomic.Int64
	status   string // how it ended; set before exited closes
}

// startProcess starts the plugin: argv from cfg, the data directory as
// working directory, the scrubbed environment, a process group of its own.
func startProcess(cfg *Config, prog string, stderrSink func(string)) (*process, error) {
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("provider %s: data directory: %w", cfg.ID, err)
	}
	if p, err := exec.LookPath(prog); err == nil {
		prog = p
	} else if !strings.ContainsRune(prog, '/') {
		return nil, fmt.Errorf("provider %s: %w", cfg.ID, err)
	}
	cmd := &exec.Cmd{Path: prog, Args: cfg.Command, Dir: cfg.DataDir, Env: pluginEnv(cfg),
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true}}
	pipes, err := newPipes()
	if err != nil {
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = pipes[0].r, pipes[1].w, pipes[2].w
	err = cmd.Start()
	closeAll(pipes[0].r, pipes[1].w, pipes[2].w) // the child has its own copies
	if err != nil {
		closeAll(pipes[0].w, pipes[1].r, pipes[2].r)
		return nil, fmt.Errorf("provider %s: start %s: %w", cfg.ID, cfg.Command[0], err)
	}
	p := &process{cmd: cmd, pgid: cmd.Process.Pid, stdin: pipes[0].w, stdout: pipes[1].r, errOut: pipes[2].r,
		stderr: &ring{size: stderrBytes}, exited: make(chan struct{}), stderrDone: make(chan struct{})}
	go p.captureStderr(stderrSink)
	go p.wait()
	return p, nil
}

type pipe struct{ r, w *os.File }

// newPipes returns the plugin's stdin, stdout and stderr pipes. The host's
// ends are pollable files, so that a write to a plugin that reads nothing
// can be given up (writeLine).
func newPipes() ([3]pipe, error) {
	var ps [3]pipe
	for i := range ps {
		r, w, err := os.Pipe()
		if err != nil {
			for _, p := range ps[:i] {
				closeAll(p.r, p.w)
			}
			return ps, err
		}
		ps[i] = pipe{r, w}
	}
	return ps, nil
}

func closeAll(fs ...*os.File) {
	for _, f := range fs {
		_ = f.Close()
	}
}

// wait reaps the plugin, then kills what is left of its group: nothing it
// started in its group outlives it.
func (p *process) wait() {
	err := p.cmd.Wait()
	p.status = "exit status 0"
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		p.status = exit.String()
	} else if err != nil {
		p.status = err.Error()
	}
	p.killGroup(syscall.SIGKILL)
	close(p.exited)
	go p.unblock()
}

// unblock closes the read ends once they went drainGrace without data
// after the exit, and drainLimit after it at the latest: only a process
// that left the group can still hold them, a slow reader of what the
// plugin wrote before it exited loses nothing, and one that keeps writing
// cannot keep the session open (its calls waiting, its goroutines alive).
func (p *process) unblock() {
	limit := time.Now().Add(drainLimit)
	for {
		before := p.progress.Load()
		time.Sleep(drainGrace)
		if p.progress.Load() == before || time.Now().After(limit) {
			closeAll(p.stdout, p.errOut)
			return
		}
	}
}

// Read reads stdout, counting progress for unblock.
func (p *process) Read(b []byte) (int, error) {
	n, err := p.stdout.Read(b)
	p.progress.Add(int64(n))
	return n, err
}

// captureStderr keeps the end of stderr and hands each line to sink; a
// line that never ends is handed over in pieces of stderrPiece bytes. It
// spends time linear in what the plugin writes.
func (p *process) captureStderr(sink func(string)) {
	defer close(p.stderrDone)
	buf := make([]byte, 32<<10)
	var partial []byte
	for {
		n, err := p.errOut.Read(buf)
		p.progress.Add(int64(n))
		if n > 0 {
			_, _ = p.stderr.Write(buf[:n])
			partial = splitLines(append(partial, buf[:n]...), sink)
			p.progress.Add(1) // busy, not idle: unblock waits
		}
		if err != nil {
			return
		}
	}
}

// stderrPiece bounds one piece of a stderr line handed to the log.
const stderrPiece = 4 << 10

// splitLines hands each whole line of b to sink and returns what is left
// of b (less than stderrPiece bytes), moved to b's start.
func splitLines(b []byte, sink func(string)) []byte {
	rest := b
	for len(rest) > 0 {
		i := bytes.IndexByte(rest, '\n')
		switch {
		case i >= 0 && i <= stderrPiece:
			sink(string(rest[:i]))
			rest = rest[i+1:]
		case i >= 0 || len(rest) >= stderrPiece:
			sink(string(rest[:stderrPiece]))
			rest = rest[stderrPiece:]
		default:
			return append(b[:0], rest...)
		}
	}
	return b[:0]
}

// killGroup sends sig to the plugin's process group and to the plugin
// itself, which may have left the group (setpgid) to escape it. The plugin
// is signalled through its os.Process, which never reaches another process
// that reuses its pid once it was reaped.
func (p *process) killGroup(sig syscall.Signal) {
	_ = syscall.Kill(-p.pgid, sig)
	_ = p.cmd.Process.Signal(sig)
}

// writeLine writes line to the plugin's stdin, giving up when ctx ends or
// limit passes (os.ErrDeadlineExceeded); n tells how much of it was
// written. One writer at a time.
func (p *process) writeLine(ctx context.Context, line []byte, limit time.Duration) (n int, err error) {
	_ = p.stdin.SetWriteDeadline(time.Now().Add(limit))
	var mu sync.Mutex
	written := false
	stop := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		if !written { // not a later line's write
			_ = p.stdin.SetWriteDeadline(time.Unix(1, 0)) // wakes the write now
		}
	})
	defer stop()
	n, err = p.stdin.Write(line)
	mu.Lock()
	written = true
	mu.Unlock()
	return n, err
}

// waitExit reports whether the plugin exits within d.
func (p *process) waitExit(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.exited:
		return true
	case <-t.C:
		return false
	}
}

// stop ends the plugin: its stdin closes, SIGTERM to its group after
// stdinGrace, SIGKILL after termGrace more. It returns once it exited.
func (p *process) stop() {
	_ = p.stdin.Close()
	if p.waitExit(stdinGrace) {
		return
	}
	p.killGroup(syscall.SIGTERM)
	if p.waitExit(termGrace) {
		return
	}
	p.killGroup(syscall.SIGKILL)
	<-p.exited
}

// kill ends the plugin's group at once (a protocol violation).
func (p *process) kill() {
	_ = p.stdin.Close()
	p.killGroup(syscall.SIGKILL)
	<-p.exited
}

// pluginEnv is the plugin's whole environment: PATH, HOME, TMPDIR, LANG and
// LC_* from the host, the manifest's passthrough names (but those
// Config.Withhold reports), XBOT_PROVIDER_DATA_DIR, and
// PYTHONDONTWRITEBYTECODE=1 (an interpreter writing its cache into the
// plugin's directory would change its digest). Nothing else of the host's
// environment.
func pluginEnv(cfg *Config) []string {
	keep := map[string]bool{"PATH": true, "HOME": true, "TMPDIR": true, "LANG": true}
	for _, n := range cfg.EnvPassthrough {
		if CheckPassthrough(n) == nil && (cfg.Withhold == nil || !cfg.Withhold(n)) {
			keep[n] = true
		}
	}
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if keep[name] || strings.HasPrefix(name, "LC_") {
			env = append(env, kv)
		}
	}
	return append(env, "XBOT_PROVIDER_DATA_DIR="+cfg.DataDir, "PYTHONDONTWRITEBYTECODE=1")
}
