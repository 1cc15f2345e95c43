package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/xbot-runtime/xbot/services/engine/compute"
)

// boxLimits are one Box's limits and, with cgroups, its group; every
// command of the box runs in a subgroup of its own.
type boxLimits struct {
	h      hierarchy // nil: rlimits only
	parent cgroup    // where group is created
	limits compute.Limits
	hold   hold       // how a command is held until placed
	group  cgroup     // nil until the first command, and once handed on
	pool   *groupPool // where the group goes when the box closes; nil: removed

	mu      sync.Mutex
	running int         // commands running in a subgroup
	idle    []idleLeaf  // empty subgroups of finished commands, for the next ones
	closed  bool        // the Box is closed: remove the group once running is 0
	seen    groupCounts // the group's own counters, when no command can have changed them since
	tainted bool        // a subgroup was left with processes: seen is never valid again
}

// idleLeaf is an empty subgroup and its counters when its command finished.
// No process is in it, so they cannot change until the next command joins.
type idleLeaf struct {
	g    cgroup
	seen counters
}

// groupCounts are the box's group's own counters as last read, valid while
// no command runs: every process of the box is in a subgroup, so the
// group's limits are hit only while one runs. A new group's are zero.
type groupCounts struct {
	c     counters
	valid bool
}

// close removes the box's group, now or once its last command finished.
func (b *boxLimits) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	b.removeIdle()
}

// removeIdle, once the Box is closed and no command runs, hands its group
// on to the pool with its idle subgroups, or removes them; while a command
// still runs it removes the idle subgroups only. b.mu is held.
func (b *boxLimits) removeIdle() {
	if !b.closed {
		return
	}
	if b.running == 0 && b.group != nil && b.seen.valid && !b.tainted &&
		b.pool.put(b.limits, pooled{group: b.group, seen: b.seen.c, leaves: b.idle}) {
		b.group, b.idle = nil, nil
		return
	}
	for _, leaf := range b.idle {
		_ = leaf.g.remove()
	}
	b.idle = nil
	if b.running == 0 && b.group != nil {
		_ = b.group.remove()
		b.group = nil
	}
}

// placement is one command's share of its box's limits.
type placement struct {
	box    *boxLimits
	leaf   cgroup   // nil: rlimits only
	traced bool     // held by ptrace (holdTrace), else by the gate
	gate   *os.File // gate: the pipe's write end, kept here
	held   *os.File // gate: the pipe's read end, given to the process
	before counters
}

// gateScript holds the process until the executor has placed it, then
// becomes the command: it lowers its own file-size ($2, 512-byte blocks) and
// data-segment ($3, KiB) limits ("-" leaves one alone), reads one line from
// the gate descriptor ($1), closes it and execs the rest of its arguments.
// Placing a started process leaves no window in which the command runs
// unlimited. The gate sets these limits itself because it may run as the
// sandbox user, whose limits the executor may not change (prlimit on
// another user's process needs CAP_SYS_RESOURCE); lowering one's own needs
// nothing.
const gateScript = `fd=$1 f=$2 d=$3; shift 3; ` +
	`{ [ "$f" = - ] || ulimit -f "$f"; } && { [ "$d" = - ] || ulimit -d "$d"; } || exit 125; ` +
	`eval "read -r _ <&$fd && exec \"\$@\" $fd<&-"; exit 125`

// firstFD is Launch.FirstFD for the commands of b.
func (b *boxLimits) firstFD() int {
	if b.hold == holdTrace {
		return 3
	}
	return 4 // after the gate's pipe (gated)
}

// prepare makes cmd start held (see hold) and creates its subgroup.
func (b *boxLimits) prepare(cmd *exec.Cmd) (*placement, error) {
	p := &placement{box: b, traced: b.hold == holdTrace}
	if !p.traced {
		if err := p.gated(cmd); err != nil {
			return nil, err
		}
	}
	if b.h == nil {
		return p, nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.ensureGroup(); err != nil {
		p.abort()
		return nil, err
	}
	leaf, err := b.subgroup()
	if err != nil {
		p.abort()
		return nil, err
	}
	group := b.seen.c
	if !b.seen.valid { // a command runs, or ran and left processes
		group = b.h.counters(b.group)
	}
	b.running++
	b.seen.valid = false
	p.leaf, p.before = leaf.g, leaf.seen.add(group)
	return p, nil
}

// gated makes cmd start as the gate, holding the pipe's read end.
func (p *placement) gated(cmd *exec.Cmd) error {
	r, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("limits: %w", err)
	}
	const fd = 3 // before the launcher's files: see Launch.FirstFD
	cmd.ExtraFiles = append([]*os.File{r}, cmd.ExtraFiles...)
	fsize, data := p.box.gateLimits()
	cmd.Args = append([]string{shell, "-c", gateScript, "xbot-gate", strconv.Itoa(fd), fsize, data, cmd.Path},
		cmd.Args[1:]...)
	cmd.Path = shell
	p.gate, p.held = w, r
	return nil
}

// subgroup is an idle subgroup of the box, or a new one (its counters
// zero); b.mu is held. A subgroup is reused only once its command's
// processes are all gone, with the counters read when they were, so reuse
// changes nothing a command sees; it spares a cgroup mkdir and rmdir per
// hierarchy.
func (b *boxLimits) subgroup() (idleLeaf, error) {
	if n := len(b.idle); n > 0 {
		leaf := b.idle[n-1]
		b.idle = b.idle[:n-1]
		return leaf, nil
	}
	leaf := b.group.child(groupName("cmd"))
	if err := leaf.create(); err != nil {
		_ = leaf.remove()
		return idleLeaf{}, fmt.Errorf("limits: %w", err)
	}
	return idleLeaf{g: leaf}, nil
}

// shell runs the gate.
const shell = "/bin/sh"

// start starts cmd and releases it once placed (see hold). On error the
// caller kills what started.
func (p *placement) start(cmd *exec.Cmd) error {
	if p.traced {
		return startTraced(cmd, p.place)
	}
	defer func() { _ = p.gate.Close() }() // unreleased, a gated process exits with 125
	err := cmd.Start()
	_ = p.held.Close() // the child has its own
	if err != nil {
		return err
	}
	if err := p.place(cmd.Process.Pid); err != nil {
		return err
	}
	if _, err := p.gate.WriteString("\n"); err != nil {
		return fmt.Errorf("limits: release the command: %w", err)
	}
	return nil
}

// place puts the held process pid into its subgroup and sets its rlimits.
func (p *placement) place(pid int) error {
	if p.leaf != nil {
		if err := p.leaf.join(pid); err != nil {
			return fmt.Errorf("limits: %w", err)
		}
	}
	if err := p.rlimits(pid); err != nil {
		return fmt.Errorf("limits: %w", err)
	}
	return nil
}

// abort closes both ends of the gate, if any: a gated process exits with
// 125.
func (p *placement) abort() {
	if p.traced {
		return
	}
	_ = p.gate.Close()
	_ = p.held.Close()
}

// rlimitBytes are RLIMIT_FSIZE (the workspace limit, rounded up to 512
// bytes) and, without cgroups, RLIMIT_DATA (the memory limit, rounded down
// to a KiB); 0 for none. The gate sets them in the units of sh's ulimit.
func (b *boxLimits) rlimitBytes() (fsize, data int64) {
	if v := b.limits.WorkspaceBytes; v > 0 {
		fsize = (v + 511) / 512 * 512
	}
	if v := b.limits.MemoryBytes; v > 0 && b.h == nil {
		data = max(v/1024, 1) * 1024
	}
	return fsize, data
}

// gateLimits are rlimitBytes as the gate's arguments: 512-byte blocks and
// KiB, "-" for none.
func (b *boxLimits) gateLimits() (fsize, data string) {
	fsize, data = "-", "-"
	f, d := b.rlimitBytes()
	if f > 0 {
		fsize = strconv.FormatInt(f/512, 10)
	}
	if d > 0 {
		data = strconv.FormatInt(d/1024, 10)
	}
	return fsize, data
}

// rlimits sets process pid's rlimits that the gate does not set itself:
// with ptrace, the file-size and data limits (rlimitBytes); without cgroups
// and for a non-root executor whose commands run as itself, RLIMIT_NPROC =
// the uid's processes running now plus the pids limit.
func (p *placement) rlimits(pid int) error {
	if p.traced {
		fsize, data := p.box.rlimitBytes()
		for _, l := range []struct {
			name string
			res  int
			v    int64
		}{{"RLIMIT_FSIZE", unix.RLIMIT_FSIZE, fsize}, {"RLIMIT_DATA", unix.RLIMIT_DATA, data}} {
			if l.v <= 0 {
				continue
			}
			lim := unix.Rlimit{Cur: uint64(l.v), Max: uint64(l.v)} // #nosec G115 -- l.v > 0
			if err := unix.Prlimit(pid, l.res, &lim, nil); err != nil {
				return fmt.Errorf("set %s: %w", l.name, err)
			}
		}
	}
	l := p.box.limits
	if p.box.h != nil || l.Pids <= 0 || os.Getuid() == 0 { // root is exempt from RLIMIT_NPROC
		return nil
	}
	v := l.Pids + uidTasks(os.Getuid())
	lim := unix.Rlimit{Cur: uint64(v), Max: uint64(v)} // #nosec G115 -- v > 0
	if err := unix.Prlimit(pid, unix.RLIMIT_NPROC, &lim, nil); err != nil {
		return fmt.Errorf("set RLIMIT_NPROC: %w", err)
	}
	return nil
}

// kill kills every process of the command's subgroup and reports whether
// it is empty now.
func (p *placement) kill() bool {
	return p.leaf == nil || p.box.h.kill(p.leaf)
}

// finish kills what is left of the command, removes its subgroup and
// returns the limit it hit, if any; ws is the exit status.
func (p *placement) finish(ws syscall.WaitStatus) *compute.LimitError {
	l := p.box.limits
	hit := ws.Signaled() && ws.Signal() == syscall.SIGXFSZ
	var lerr *compute.LimitError
	if hit {
		lerr = &compute.LimitError{Resource: compute.ResourceWorkspace, Limit: l.WorkspaceBytes, Mechanism: "rlimit, one file"}
	}
	if p.leaf == nil {
		return lerr
	}
	empty := p.kill()
	b := p.box
	b.mu.Lock()
	defer b.mu.Unlock()
	// Read under the lock, so that the last command to finish reads the
	// group after every other one's processes are gone.
	leaf, group := b.h.counters(p.leaf), b.h.counters(b.group)
	c := leaf.add(group)
	b.running--
	if empty && !b.closed {
		b.idle = append(b.idle, idleLeaf{g: p.leaf, seen: leaf})
	} else {
		_ = p.leaf.remove()
	}
	// A subgroup left with processes (it could not be emptied) keeps them
	// in the box's group: its counters are read again before each command.
	b.seen = groupCounts{c: group, valid: b.running == 0 && empty && !b.tainted}
	b.tainted = b.tainted || !empty
	b.removeIdle()
	switch {
	case c.oomKills > p.before.oomKills:
		return &compute.LimitError{Resource: compute.ResourceMemory, Limit: l.MemoryBytes, Mechanism: b.h.mechanism()}
	case c.pidsLimit > p.before.pidsLimit:
		return &compute.LimitError{Resource: compute.ResourcePids, Limit: l.Pids, Mechanism: b.h.mechanism()}
	}
	return lerr
}

// uidTasks counts the tasks (threads) of processes whose real uid is uid:
// RLIMIT_NPROC counts them all, host-wide.
func uidTasks(uid int) int64 {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	var n int64
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		st, err := os.Stat("/proc/" + e.Name() + "/task")
		if err != nil {
			continue
		}
		if s, ok := st.Sys().(*syscall.Stat_t); ok && int(s.Uid) == uid {
			n += int64(s.Nlink) - 2 // a directory's links: ., .. and one per subdirectory
		}
	}
	return n
}
