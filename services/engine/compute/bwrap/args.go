package bwrap

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/xbot-runtime/xbot/services/engine/compute/internal/sandbox"
)

// shell runs every command inside the sandbox.
const shell = "/bin/sh"

// tmpfs lives in RAM, so /tmp and /dev/shm are bounded: a command cannot
// exhaust the host's memory through them. The run's real scratch space is
// TMPDIR, on disk; 512 MiB and 64 MiB leave room for tools that insist on
// /tmp or POSIX shared memory.
const (
	tmpSize = 512 << 20
	shmSize = 64 << 20
)

// systemDirs are bound read-only when they are directories on the host and
// recreated when they are symlinks (merged /usr).
var systemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}

// defaultEtc is the part of /etc a command sees, read-only: what the dynamic
// linker, name resolution, TLS verification, time zones and Debian's
// alternatives need. Everything else of /etc stays hidden — in particular
// shadow, gshadow, sudoers, ssh/ (host keys), ssl/private, and tool
// configuration that may carry credentials (pip.conf, npmrc, environment).
var defaultEtc = []string{
	"/etc/alternatives", "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d",
	"/etc/passwd", "/etc/group", "/etc/nsswitch.conf", "/etc/host.conf", "/etc/hosts",
	"/etc/resolv.conf", "/etc/gai.conf", "/etc/protocols", "/etc/services",
	"/etc/localtime", "/etc/timezone", "/etc/os-release", "/etc/debian_version",
	"/etc/ssl/certs", "/etc/ssl/openssl.cnf",
}

// systemArgs binds the read-only system as found on this host and the
// directories of defaultEtc, and returns the other paths of defaultEtc:
// those are copied in for each command (etcCopies). The operator's extra
// paths are bound after the copies (extraArgs), so that one of them may
// cover a copy.
func systemArgs() (args, etcFiles []string) {
	var a []string
	for _, d := range systemDirs {
		fi, err := os.Lstat(d)
		switch {
		case err != nil:
		case fi.Mode()&os.ModeSymlink != 0:
			if target, err := os.Readlink(d); err == nil {
				a = append(a, "--symlink", target, d)
			}
		case fi.IsDir():
			a = append(a, "--ro-bind", d, d)
		}
	}
	for _, p := range defaultEtc {
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			a = append(a, "--ro-bind-try", p, p) // -try: one this host lacks is skipped
		} else {
			etcFiles = append(etcFiles, p)
		}
	}
	return a, etcFiles
}

// extraArgs binds the operator's read-only paths (Config.ReadOnlyPaths).
func extraArgs(extra []string) []string {
	var a []string
	for _, p := range extra {
		a = append(a, "--ro-bind-try", p, p) // -try: a file this host lacks is skipped
	}
	return a
}

// maxEtcCopy bounds a file of defaultEtc copied into a sandbox; a larger one
// is bound instead.
const maxEtcCopy = 1 << 20

// etcCopies are the bwrap arguments that put the files of defaultEtc into a
// command's sandbox, and the files they read, opened now: the descriptors
// from firstFD on (in exec.Cmd.ExtraFiles after the seccomp program).
//
// Each bind held a command's start up by about 0.15 ms (measured here:
// wall time, almost none of it CPU), and the files took 16 of them; a copy
// into the sandbox's own root (--file) needs no mount. Only a regular file
// every user may read, of at most maxEtcCopy bytes, is copied, read-only
// (--perms 0444), so a command reads no more than it could through a bind;
// any other is bound as before, and one this host lacks is skipped.
func etcCopies(paths []string, firstFD int) ([]string, []*os.File) {
	var (
		a     []string
		files []*os.File
	)
	for _, p := range paths {
		// Plain system calls: os.Open would register the file with the
		// runtime's poller, and deregister it at close.
		fd, err := unix.Open(p, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NONBLOCK|unix.O_NOCTTY, 0) // a FIFO does not block
		if err != nil {
			a = append(a, "--ro-bind-try", p, p)
			continue
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Mode&0o004 == 0 ||
			st.Size > maxEtcCopy {
			_ = unix.Close(fd)
			a = append(a, "--ro-bind-try", p, p)
			continue
		}
		a = append(a, "--perms", "0444", "--file", strconv.Itoa(firstFD+len(files)), p)
		files = append(files, os.NewFile(uintptr(fd), p))
	}
	return a, files
}

// extraFiles are the descriptors a command's bwrap reads: the seccomp
// program, the first of exec.Cmd.ExtraFiles (on descriptor first:
// sandbox.Launch.FirstFD, 3 for New's probes), then the files of defaultEtc
// to copy, opened.
type extraFiles struct {
	first int
	etc   []string // etcCopies' arguments
	files []*os.File
}

// openExtraFiles opens the files of defaultEtc for a command whose extra
// files begin at descriptor first.
func (p *Provider) openExtraFiles(first int) extraFiles {
	etc, files := etcCopies(p.etc, first+1)
	return extraFiles{first: first, etc: etc, files: files}
}

// close closes the opened files, for a command that will not start.
func (x extraFiles) close() { closeAll(x.files) }

// base is the namespaces, the sandbox user, the seccomp filter and the
// read-only system (with x's copies of /etc files), common to every command
// and to New's probes.
func (p *Provider) base(network bool, x extraFiles) []string {
	a := []string{
		"--unshare-all",     // new user, PID, network, IPC, UTS and cgroup namespaces
		"--unshare-user",    // --unshare-all only tries; required by --disable-userns
		"--disable-userns",  // no nested user namespaces: less kernel attack surface
		"--die-with-parent", // the sandbox dies with the bwrap process Exec waits on
		// No --new-session: Exec already starts bwrap in a new session without a
		// controlling terminal (no TIOCSTI), and keeping the sandbox in bwrap's
		// process group lets one kill reach all of it (see sandbox.Box.start).
		"--cap-drop", "ALL", // bwrap as a namespace's root would otherwise keep every capability
		"--hostname", "sandbox", // the host's name is not revealed
		"--seccomp", strconv.Itoa(x.first),
	}
	a = append(a, p.id.userArgs()...)
	if network {
		a = append(a, "--share-net") // pasta's namespace, see networked
	}
	a = append(a, p.system...)
	a = append(a, x.etc...)
	a = append(a, p.extra...)
	a = append(a, "--proc", "/proc", "--dev", "/dev")
	a = append(a, kernelArgs()...)
	return append(a, "--size", strconv.Itoa(tmpSize), "--tmpfs", "/tmp",
		"--size", strconv.Itoa(shmSize), "--tmpfs", "/dev/shm")
}

// kernelArgs make the kernel's knobs in /proc read-only on top of what the
// sandbox user may write anyway (nothing of the kernel's own: it is not
// root on the host): /proc/sys is bound read-only over itself.
func kernelArgs() []string {
	return []string{"--ro-bind", "/proc/sys", "/proc/sys"}
}

// probeArgs are New's trial sandbox: base, a read-only root, `sh -c :`.
func (p *Provider) probeArgs(network bool, x extraFiles) []string {
	return append(p.base(network, x), "--remount-ro", "/", "--clearenv", "--", shell, "-c", ":")
}

// args are bwrap's arguments for one command: base, the run's directories,
// a read-only root, the working directory and the allow-listed environment.
func (p *Provider) args(l sandbox.Launch, x extraFiles) []string {
	a := p.base(l.Network, x)
	for _, m := range l.Layout.Mounts() {
		op := "--bind"
		if m.ReadOnly {
			op = "--ro-bind"
		}
		a = append(a, op, m.Host, m.Sandbox)
	}
	// Remounting the root tmpfs read-only after the binds leaves only them,
	// /tmp and /dev/shm writable; danger-full-access keeps it writable (it
	// is the command's own and discarded with it).
	if !l.WritableRoot {
		a = append(a, "--remount-ro", "/")
	}
	a = append(a, "--chdir", l.Cwd, "--clearenv")
	paths := l.Layout.Paths()
	for _, kv := range sandbox.Env(paths.Workspace, paths.Tmp, l.Env) {
		name, value, _ := strings.Cut(kv, "=")
		a = append(a, "--setenv", name, value)
	}
	return append(a, "--", shell, "-c", l.Command)
}

// launch builds the process of one command.
func (p *Provider) launch(l sandbox.Launch) (*exec.Cmd, error) {
	if l.Network {
		if l.Companion == nil {
			return nil, errors.New("networked sandbox: a command outside a sandbox handle")
		}
		return p.launchNetworked(l)
	}
	x := p.openExtraFiles(l.FirstFD)
	return p.command(p.args(l, x), x)
}

// command is bwrap with args (see finish).
func (p *Provider) command(args []string, x extraFiles) (*exec.Cmd, error) {
	cmd := &exec.Cmd{Path: p.binary, Args: append([]string{p.binary}, args...)}
	return p.finish(cmd, nil, x)
}

// finish makes cmd start as the sandbox user, with an empty environment
// (the command's comes from bwrap's --setenv) and these extra files: pre,
// then the seccomp program, then x's. It closes them when it fails;
// otherwise they are the command's.
func (p *Provider) finish(cmd *exec.Cmd, pre []*os.File, x extraFiles) (*exec.Cmd, error) {
	filter, err := filterFile(p.filter)
	if err != nil {
		closeAll(pre)
		x.close()
		return nil, err
	}
	cmd.Env = []string{}
	cmd.ExtraFiles = append(append(pre, filter), x.files...)
	p.id.credential(cmd)
	return cmd, nil
}
