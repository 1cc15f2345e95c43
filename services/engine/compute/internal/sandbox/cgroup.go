package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/xbot-runtime/xbot/services/engine/compute"
)

// hierarchy is one cgroup version's file names and semantics.
type hierarchy interface {
	// mechanism is "cgroup v2" or "cgroup v1".
	mechanism() string
	// limit writes l into the files of g.
	limit(g cgroup, l compute.Limits) error
	// counters reads how often g hit its memory and pids limits.
	counters(g cgroup) counters
	// kill kills every process of g and reports whether g is empty now
	// (no process is left to fork into it).
	kill(g cgroup) bool
	// procs is the cgroup.procs file listing g's processes.
	procs(g cgroup) string
	// nest lets g have subgroups that the controllers apply to.
	nest(g cgroup) error
	// charge reads the memory charged to g and its subgroups; false when
	// it cannot be read.
	charge(g cgroup) (int64, bool)
	// refill writes l's CPU quota into g again, which gives the current
	// period's runtime back.
	refill(g cgroup, l compute.Limits) error
}

// cgroup is one group: its directory in each mounted hierarchy the
// mechanism uses (one for v2; memory, pids and cpu for v1).
type cgroup []string

// child is the group's subgroup name, in every hierarchy.
func (g cgroup) child(name string) cgroup {
	c := make(cgroup, len(g))
	for i, d := range g {
		c[i] = filepath.Join(d, name)
	}
	return c
}

// create makes g's directories.
func (g cgroup) create() error {
	for _, d := range g {
		if err := os.Mkdir(d, 0o750); err != nil {
			return fmt.Errorf("create cgroup: %w", err)
		}
	}
	return nil
}

// join moves process pid into g in every hierarchy.
func (g cgroup) join(pid int) error {
	for _, d := range g {
		if err := writeFile(filepath.Join(d, "cgroup.procs"), strconv.Itoa(pid)); err != nil {
			return fmt.Errorf("join cgroup: %w", err)
		}
	}
	return nil
}

// remove deletes g's directories; a group that still has processes stays
// (EBUSY) and is reported.
func (g cgroup) remove() error {
	var errs []error
	for _, d := range g {
		if err := syscall.Rmdir(d); err != nil && !errors.Is(err, syscall.ENOENT) {
			errs = append(errs, fmt.Errorf("remove cgroup %s: %w", filepath.Base(d), err))
		}
	}
	return errors.Join(errs...)
}

// counters are a group's limit events.
type counters struct {
	oomKills  int64
	pidsLimit int64
}

func (c counters) add(o counters) counters {
	return counters{oomKills: c.oomKills + o.oomKills, pidsLimit: c.pidsLimit + o.pidsLimit}
}

// killTimeout bounds how long killing a group waits for it to be empty: a
// SIGKILLed process leaves its cgroup as it exits, within milliseconds; a
// fork bomb under its pids limit is emptied in a few rounds.
const killTimeout = time.Second

// killProcs SIGKILLs every process listed in the procs file, again and
// again, until the group is empty or killTimeout passed, and reports
// whether it is empty. Repeating covers processes forked between reading
// the list and the kill.
func killProcs(procs string) bool {
	deadline := time.Now().Add(killTimeout)
	for {
		pids := readPids(procs)
		if len(pids) == 0 {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(2 * time.Millisecond) // give the kernel time to let them exit
	}
}

// readPids returns the process IDs in a cgroup.procs file (none when it is
// unreadable: the group is gone).
func readPids(procs string) []int {
	data, err := readControl(procs)
	if err != nil {
		return nil
	}
	var pids []int
	for _, f := range strings.Fields(string(data)) {
		if pid, err := strconv.Atoi(f); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// readKey returns the value of key in a flat-keyed file ("key value"
// lines, such as memory.events); 0 when missing.
func readKey(file, key string) int64 {
	data, err := readControl(file)
	if err != nil {
		return 0
	}
	for len(data) > 0 {
		var line []byte
		line, data, _ = bytes.Cut(data, []byte{'\n'})
		k, v, ok := bytes.Cut(line, []byte{' '})
		if ok && string(k) == key {
			n, _ := strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64)
			return n
		}
	}
	return 0
}

// readInt reads a control file holding one number.
func readInt(file string) (int64, bool) {
	data, err := readControl(file)
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseInt(string(bytes.TrimSpace(data)), 10, 64)
	return n, err == nil
}

// Control files are read and written with plain system calls: os.Open
// would register each with the runtime's poller (cgroup files are
// pollable), an epoll_ctl on open and on close, a quarter of the cost of the
// counters read around every command.

// readControl reads a small control file whole.
func readControl(file string) ([]byte, error) {
	fd, err := unix.Open(file, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: file, Err: err}
	}
	defer func() { _ = unix.Close(fd) }()
	buf := make([]byte, 0, 512)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := ignoringEINTR(func() (int, error) { return unix.Read(fd, buf[len(buf):cap(buf)]) })
		if err != nil {
			return nil, &os.PathError{Op: "read", Path: file, Err: err}
		}
		if n == 0 {
			return buf, nil
		}
		buf = buf[:len(buf)+n]
	}
}

// writeFile writes s to an existing control file.
func writeFile(file, s string) error {
	fd, err := unix.Open(file, unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: file, Err: err}
	}
	_, err = ignoringEINTR(func() (int, error) { return unix.Write(fd, []byte(s)) })
	if cerr := unix.Close(fd); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s: %w", filepath.Base(file), err)
	}
	return nil
}

// ignoringEINTR calls fn again while it fails with EINTR.
func ignoringEINTR(fn func() (int, error)) (int, error) {
	for {
		n, err := fn()
		if err != unix.EINTR { //nolint:errorlint // a bare errno
			return n, err
		}
	}
}

// writeOptional writes s to a control file the kernel may lack (swap
// accounting); a missing file is not an error.
func writeOptional(file, s string) error {
	if err := writeFile(file, s); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// ownCgroup returns this process's cgroup path (relative to the mount) in
// the v1 hierarchy holding controller, or in the v2 hierarchy when
// controller is "".
func ownCgroup(controller string) (string, bool) {
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", false
	}
	for _, line := range strings.Split(string(data), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if controller == "" && parts[0] == "0" && parts[1] == "" {
			return parts[2], true
		}
		for _, c := range strings.Split(parts[1], ",") {
			if controller != "" && c == controller {
				return parts[2], true
			}
		}
	}
	return "", false
}
