package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/xbot-runtime/xbot/services/engine/compute"
)

// errClosed is returned by every method of a closed Box (errDestroyed once
// its key was destroyed).
var errClosed = errors.New("sandbox handle is closed")

// Launch is one command for a Launcher to build.
type Launch struct {
	Layout *Layout
	// Command is the shell command (for /bin/sh -c).
	Command string
	// Cwd is the sandbox path of an existing directory inside the layout.
	Cwd     string
	Network bool
	// AllowHosts is Spec.AllowHosts.
	AllowHosts []string
	// Env is Spec.Env.
	Env []string
	// WritableRoot leaves the sandbox's root filesystem writable (safety
	// mode danger-full-access); bwrap only.
	WritableRoot bool
	// FirstFD is the descriptor the first of the launcher's extra files
	// (exec.Cmd.ExtraFiles) gets in the command: 3, or 4 when the command
	// is held by a gate, whose pipe comes first (a shell names only the
	// descriptors 0–9).
	FirstFD int
	// Companion gives the launcher the box's companion process (see
	// Companion).
	Companion CompanionFunc
}

// Launcher builds the process of one command: path, arguments, environment
// and working directory. Exec sets its standard streams and session.
type Launcher func(Launch) (*exec.Cmd, error)

// Box is a run's handle on its sandbox; it implements compute.Sandbox.
type Box struct {
	layout  *Layout
	spec    compute.Spec
	launch  Launcher
	release func(*Box)
	create  func(*Box, []Mount) error // Provider.create
	// hostPaths: a command needs only its cwd, /workspace and tmp
	// (WithHostPaths).
	hostPaths bool
	limits    *boxLimits
	meter     *usageMeter // the key's, shared by its open handles

	mu     sync.Mutex
	closed bool
	// destroyed: the provider's Destroy of the key closed the handle, so
	// its sandbox is gone (compute.ErrSandboxLost), not merely released.
	destroyed bool
	running   map[int]struct{} // process group IDs
	compPgid  int              // the companion's process group, 0 when none runs

	compMu sync.Mutex    // held while the companion starts or is used
	comp   *companionRun // under compMu; nil when none runs
}

// Paths returns the run's sandbox paths.
func (b *Box) Paths() compute.Paths { return b.layout.Paths() }

// ReadFile implements compute.Sandbox.
func (b *Box) ReadFile(ctx context.Context, p string, limit int64) ([]byte, bool, error) {
	if err := b.usable(ctx); err != nil {
		return nil, false, err
	}
	return b.layout.ReadFile(p, limit)
}

// WriteFile implements compute.Sandbox.
func (b *Box) WriteFile(ctx context.Context, p string, data []byte) error {
	if err := b.usable(ctx); err != nil {
		return err
	}
	if m, _, err := b.layout.resolve(p); err == nil && !m.ReadOnly {
		if err := b.ensure(m); err != nil {
			return fmt.Errorf("write %s: %w", p, err)
		}
	}
	if err := b.limits.checkWrite(b.layout, b.meter, p, len(data)); err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	return b.layout.WriteFile(p, data)
}

// ListFiles implements compute.Sandbox.
func (b *Box) ListFiles(ctx context.Context, dir string, depth int) ([]compute.FileInfo, error) {
	if err := b.usable(ctx); err != nil {
		return nil, err
	}
	files, err := b.layout.ListFiles(dir, depth, ctx.Err)
	if errors.Is(err, compute.ErrNotFound) {
		// One of the run's directories that nothing has needed yet is
		// empty, not missing.
		if m, rel, rerr := b.layout.resolve(dir); rerr == nil && rel == "." && !b.layout.created(m) {
			return nil, nil
		}
	}
	return files, err
}

// ensure creates the mounts ms unless this layout did already; the check
// runs without the provider's lock, so only a handle's first use of a
// directory waits for it.
func (b *Box) ensure(ms ...Mount) error {
	missing := ms[:0:0]
	for _, m := range ms {
		if !b.layout.created(m) {
			missing = append(missing, m)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return b.create(b, missing)
}

// Kill sends SIGKILL to the process group of every command running now;
// the box's companion, if any, stays.
func (b *Box) Kill() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	for pgid := range b.running {
		killGroup(pgid)
	}
	return nil
}

// Close kills what the handle still runs, asks its companion to end, and
// releases it; the sandbox's directories remain.
func (b *Box) Close() error {
	b.shut(false)
	b.stopCompanion()
	b.release(b)
	b.limits.close()
	return nil
}

// shut kills the running commands, and the companion when the sandbox
// itself is gone (destroyed), and refuses any further call.
func (b *Box) shut(destroyed bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	b.destroyed = b.destroyed || destroyed
	for pgid := range b.running {
		killGroup(pgid)
	}
	if destroyed && b.compPgid != 0 {
		killGroup(b.compPgid)
	}
}

// usable refuses a call when ctx ended, the handle is closed or the
// sandbox was lost (compute.ErrSandboxLost).
func (b *Box) usable(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := b.shutErr(); err != nil {
		return err
	}
	return b.lost()
}

// shutErr is the error of a call on a closed handle (nil while open).
func (b *Box) shutErr() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.destroyed:
		return errDestroyed
	case b.closed:
		return errClosed
	}
	return nil
}

// start starts cmd and registers its process group, unless the handle is
// closed; under the lock, so Kill never misses a command that started.
//
// The process starts a new session (and so a new process group): a
// command has no controlling terminal, so it can neither read nor inject
// input (TIOCSTI) into the executor's, and one kill(-pgid) reaches every
// process that stayed in the group, atomically. For bwrap this replaces
// --new-session, which would move the sandbox's init out of the group
// and leave it to --die-with-parent, racy when the kill comes during setup.
//
// The command starts held (see hold): it is placed in its group and gets
// its rlimits before it runs; when that fails it is killed unstarted.
func (b *Box) start(cmd *exec.Cmd, pl *placement) error {
	return b.startProcess(cmd, pl, func(pgid int) { b.running[pgid] = struct{}{} })
}

// startProcess starts cmd as start says, registering its process group
// with register (under b.mu) once it exists.
func (b *Box) startProcess(cmd *exec.Cmd, pl *placement, register func(pgid int)) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	defer closeExtraFiles(cmd)
	if b.closed {
		return errClosed
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setsid = true // kept: the launcher's credentials
	err := pl.start(cmd)
	if cmd.Process == nil {
		return err
	}
	register(cmd.Process.Pid)
	if err != nil {
		killGroup(cmd.Process.Pid)
		return err
	}
	return nil
}

// closeExtraFiles closes this process's copies of the files a launcher
// handed to the command (cmd.ExtraFiles): the child has its own once it
// started, and none is needed if it did not.
func closeExtraFiles(cmd *exec.Cmd) {
	for _, f := range cmd.ExtraFiles {
		if f != nil {
			_ = f.Close()
		}
	}
}

func (b *Box) finished(pgid int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.running, pgid)
}

// cwd checks that the sandbox path p ("" = the working directory) is an existing
// directory inside the run's directories and returns it cleaned.
func (b *Box) cwd(p string) (string, error) {
	m, rel, err := b.layout.resolve(p)
	if err != nil {
		return "", err
	}
	root, err := b.layout.openMount(m)
	if err != nil {
		return "", err
	}
	defer func() { _ = root.Close() }()
	fi, err := root.Stat(filepath.FromSlash(rel))
	if err != nil {
		return "", fileErr(err)
	}
	if !fi.IsDir() {
		return "", errors.New("not a directory")
	}
	return path.Join(m.Sandbox, rel), nil
}

// killGroup sends SIGKILL to process group pgid; a group that is already
// gone is not an error.
func killGroup(pgid int) {
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}

// exitCode is the process's exit status, or 128+signal when a signal
// ended it (the shell convention).
func exitCode(cmd *exec.Cmd) int {
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return cmd.ProcessState.ExitCode()
}
