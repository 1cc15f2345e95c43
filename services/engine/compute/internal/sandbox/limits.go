package sandbox

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/xbot-runtime/xbot/services/engine/compute"
)

// Mechanisms a LimitConfig may ask for.
const (
	// MechanismAuto picks cgroup v2, else cgroup v1, else rlimits.
	MechanismAuto = "auto"
	// MechanismCgroupV2 requires a usable cgroup v2 parent.
	MechanismCgroupV2 = "cgroup2"
	// MechanismCgroupV1 requires writable cgroup v1 memory, pids and cpu
	// hierarchies.
	MechanismCgroupV1 = "cgroup1"
	// MechanismRlimit uses per-process rlimits only.
	MechanismRlimit = "rlimit"
)

// mechRlimit is how LimitError names the rlimit mechanism.
const mechRlimit = "rlimit"

// DefaultLimits are a sandbox's limits when neither its Spec nor the
// provider's configuration sets them: 1 GiB of memory and of disk, 256
// processes and one core leave room for builds and test suites of ordinary
// projects while one run cannot starve the host.
var DefaultLimits = compute.Limits{MemoryBytes: 1 << 30, Pids: 256, CPUMillis: 1000, WorkspaceBytes: 1 << 30}

// LimitConfig configures how a Provider limits its sandboxes.
type LimitConfig struct {
	// Defaults apply to a Spec that sets no limit; a zero field takes
	// DefaultLimits.
	Defaults compute.Limits
	// Mechanism is MechanismAuto (default), MechanismCgroupV2,
	// MechanismCgroupV1 or MechanismRlimit.
	Mechanism string
	// CgroupParent is a cgroup v2 directory delegated to this process
	// (memory, pids and cpu available, no process inside), below which the
	// sandboxes' groups are created. Default: this process's own group,
	// which works only when it holds no process (the root group, or a
	// delegated leaf's parent).
	CgroupParent string
}

func (c *LimitConfig) setDefaults() {
	c.Defaults = c.Defaults.Or(DefaultLimits)
	if c.Mechanism == "" {
		c.Mechanism = MechanismAuto
	}
}

// Validate reports every configuration problem.
func (c LimitConfig) Validate() error {
	var errs []error
	switch c.Mechanism {
	case "", MechanismAuto, MechanismCgroupV2, MechanismCgroupV1, MechanismRlimit:
	default:
		errs = append(errs, fmt.Errorf("limits: mechanism %q: want auto, cgroup2, cgroup1 or rlimit", c.Mechanism))
	}
	if err := c.Defaults.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("limits: defaults: %w", err))
	}
	return errors.Join(errs...)
}

// limiter creates each Box's limits with the mechanism chosen at start.
type limiter struct {
	defaults compute.Limits
	h        hierarchy // nil: rlimits only
	parent   cgroup
	// why says why cgroups are not in use (rlimit mode).
	why string
	// hold is how commands are held until placed; holdWhy why it is the
	// gate.
	hold    hold
	holdWhy string
	// pool keeps the groups of closed boxes for the next ones (nil
	// without cgroups).
	pool *groupPool
}

// groupSeq numbers the groups this process creates, so that names stay
// unique across providers.
var groupSeq atomic.Int64

// newLimiter picks the mechanism cfg asks for; auto falls back to rlimits
// and records why.
func newLimiter(cfg LimitConfig) (*limiter, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	l := &limiter{defaults: cfg.Defaults}
	if cfg.Mechanism == MechanismRlimit {
		l.why = "configured"
		return l, nil
	}
	var errs []error
	if cfg.Mechanism != MechanismCgroupV1 {
		err := l.try(cgroupV2{}, func() (cgroup, error) { return v2Parent(cfg.CgroupParent) })
		if err == nil {
			return l, nil
		}
		errs = append(errs, err)
	}
	if cfg.Mechanism != MechanismCgroupV2 {
		err := l.try(cgroupV1{}, v1Parent)
		if err == nil {
			return l, nil
		}
		errs = append(errs, err)
	}
	if cfg.Mechanism != MechanismAuto {
		return nil, fmt.Errorf("limits: %s is not usable here: %w", cfg.Mechanism, errors.Join(errs...))
	}
	l.why = strings.ReplaceAll(errors.Join(errs...).Error(), "\n", "; ")
	return l, nil
}

// try uses h when a group can be created and limited below its parent.
func (l *limiter) try(h hierarchy, parent func() (cgroup, error)) error {
	p, err := parent()
	if err != nil {
		return err
	}
	probe := p.child(groupName("probe"))
	if err := probe.create(); err != nil {
		_ = probe.remove()
		return fmt.Errorf("%s: %w", h.mechanism(), err)
	}
	err = h.limit(probe, l.defaults)
	if rmErr := probe.remove(); err == nil {
		err = rmErr
	}
	if err != nil {
		return fmt.Errorf("%s: %w", h.mechanism(), err)
	}
	l.h, l.parent, l.pool = h, p, newGroupPool(h)
	reap(h, p)
	return nil
}

// groupName is a fresh group name: "xbot.<pid>.<what><n>".
func groupName(what string) string {
	return "xbot." + strconv.Itoa(os.Getpid()) + "." + what + strconv.FormatInt(groupSeq.Add(1), 10)
}

// Mechanism names what enforces memory and pids limits: "cgroup v2",
// "cgroup v1" or "rlimit (<why cgroups are not used>)".
func (l *limiter) Mechanism() string {
	if l.h != nil {
		return l.h.mechanism()
	}
	return mechRlimit + " (" + l.why + ")"
}

// Hold names how a command is held until it is placed and limited:
// "ptrace" or "gate (<why not ptrace>)".
func (l *limiter) Hold() string {
	if l.hold == holdTrace {
		return l.hold.String()
	}
	return l.hold.String() + " (" + l.holdWhy + ")"
}

// open returns a Box's limits: spec's, completed by the defaults. Its group
// is created with its first command (boxLimits.ensureGroup).
func (l *limiter) open(spec compute.Limits) (*boxLimits, error) {
	if err := spec.Validate(); err != nil {
		return nil, fmt.Errorf("limits: %w", err)
	}
	return &boxLimits{h: l.h, parent: l.parent, limits: spec.Or(l.defaults), hold: l.hold, pool: l.pool}, nil
}

// ensureGroup takes a pooled group with the box's limits, or creates one
// below the parent, unless the box has its group; b.mu is held.
func (b *boxLimits) ensureGroup() error {
	if b.group != nil {
		return nil
	}
	if b.closed {
		return errClosed
	}
	if pg, ok := b.pool.take(b.limits); ok {
		b.group, b.idle, b.seen = pg.group, pg.leaves, groupCounts{c: pg.seen, valid: true}
		return nil
	}
	g := b.parent.child(groupName("box"))
	if err := g.create(); err != nil {
		_ = g.remove()
		return fmt.Errorf("limits: %w", err)
	}
	if err := errors.Join(b.h.limit(g, b.limits), b.h.nest(g)); err != nil {
		_ = g.remove()
		return fmt.Errorf("limits: %w", err)
	}
	b.group, b.seen = g, groupCounts{valid: true} // a new group has hit nothing
	return nil
}
