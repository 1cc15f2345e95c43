package sandbox

import (
	"sync"
	"time"

	"github.com/xbot-runtime/xbot/services/engine/compute"
)

// A box's group is made of a directory per hierarchy (three in cgroup v1),
// its limits written into them, and a subgroup per command at once; closing
// the box removed them all again. Creating and removing cgroups is the
// dearest part of a short run's sandbox: the kernel allocates and frees
// each group's per-CPU state, and a removed memory group whose page cache
// is still charged lingers as a dying group until the cache is reclaimed.
// So a closed box whose group is empty and cheap to hand on gives it to
// the next box with the same limits instead (groupPool).
//
// A group is handed on only when the next box cannot tell it from a new
// one, apart from a small memory charge:
//   - no process is left in it or its subgroups (the box was not tainted,
//     and no command runs);
//   - its counters (OOM kills, forks refused) are carried as the baseline
//     the next box's commands compare against, as a subgroup's are between
//     the commands of one box;
//   - what is still charged to its memory (page cache of files the run
//     read or wrote, which the kernel reclaims under pressure) is at most
//     poolChargeMax and a sixteenth of the memory limit; a group holding
//     more is removed, so no run inherits much of another's memory;
//   - its CPU quota is written again when it is taken, which refills the
//     current period's runtime that the previous box may have used up.
//
// The pool is bounded (poolMax groups) and a group unused for poolIdle is
// removed, so an executor that stops running tools holds none for long;
// closing the provider removes them all. A process that exits without
// closing it leaves its pooled groups, empty, until the next executor's
// start removes them as it removes a crashed one's (reap).

const (
	// poolMax bounds the groups a provider keeps for reuse.
	poolMax = 64
	// poolChargeMax bounds the memory still charged to a group handed on.
	poolChargeMax = 16 << 20
)

// poolIdle is how long a pooled group waits for a box before it is
// removed.
const poolIdle = 10 * time.Second

// pooled is a closed box's group, ready for the next box.
type pooled struct {
	group  cgroup
	seen   counters   // the group's own counters when its box closed
	leaves []idleLeaf // its empty subgroups, with their counters
	at     time.Time  // when it was pooled
}

// groupPool keeps the groups of closed boxes by the limits they enforce.
type groupPool struct {
	h    hierarchy
	idle time.Duration    // poolIdle
	now  func() time.Time // time.Now; a test's clock

	mu     sync.Mutex
	free   map[compute.Limits][]pooled // newest last
	n      int
	timer  *time.Timer // removes what waited poolIdle; nil when none is armed
	closed bool        // the provider closed: nothing is kept any more
}

func newGroupPool(h hierarchy) *groupPool {
	return &groupPool{h: h, idle: poolIdle, now: time.Now, free: map[compute.Limits][]pooled{}}
}

// poolKey is what a group enforces of l: the workspace limit is not a
// cgroup's.
func poolKey(l compute.Limits) compute.Limits {
	l.WorkspaceBytes = 0
	return l
}

// take returns a pooled group enforcing l, with its CPU period refilled,
// if there is one.
func (p *groupPool) take(l compute.Limits) (pooled, bool) {
	if p == nil {
		return pooled{}, false
	}
	k := poolKey(l)
	for {
		p.mu.Lock()
		list := p.free[k]
		if len(list) == 0 {
			p.mu.Unlock()
			return pooled{}, false
		}
		g := list[len(list)-1]
		p.free[k] = list[:len(list)-1]
		p.n--
		p.mu.Unlock()
		if err := p.h.refill(g.group, l); err == nil {
			return g, true
		}
		g.remove() // gone or broken: try the next, or make a new one
	}
}

// put keeps g for the next box enforcing l, and reports whether it did:
// not when the pool is full or too much memory is still charged to g
// (see above). The caller removes a group put refuses.
func (p *groupPool) put(l compute.Limits, g pooled) bool {
	if p == nil {
		return false
	}
	charged, ok := p.h.charge(g.group)
	limit := int64(poolChargeMax)
	if l.MemoryBytes > 0 {
		limit = min(limit, l.MemoryBytes/16)
	}
	if !ok || charged > limit {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || p.n >= poolMax {
		return false
	}
	g.at = p.now()
	k := poolKey(l)
	p.free[k] = append(p.free[k], g)
	p.n++
	if p.timer == nil {
		p.timer = time.AfterFunc(p.idle, p.expire)
	}
	return true
}

// expire removes the groups that waited poolIdle or longer, and arms the
// timer again for the rest.
func (p *groupPool) expire() {
	p.mu.Lock()
	now := p.now()
	var old []pooled
	next := time.Duration(-1)
	for k, list := range p.free {
		keep := list[:0]
		for _, g := range list {
			if wait := p.idle - now.Sub(g.at); wait > 0 {
				keep = append(keep, g)
				if next < 0 || wait < next {
					next = wait
				}
			} else {
				old = append(old, g)
			}
		}
		if len(keep) == 0 {
			delete(p.free, k)
		} else {
			p.free[k] = keep
		}
	}
	p.n -= len(old)
	p.timer = nil
	if next >= 0 {
		p.timer = time.AfterFunc(next, p.expire)
	}
	p.mu.Unlock()
	for _, g := range old {
		g.remove()
	}
}

// close removes every pooled group; a box closed later removes its own.
func (p *groupPool) close() {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.closed = true
	if p.timer != nil {
		p.timer.Stop()
		p.timer = nil
	}
	var all []pooled
	for _, list := range p.free {
		all = append(all, list...)
	}
	p.free, p.n = map[compute.Limits][]pooled{}, 0
	p.mu.Unlock()
	for _, g := range all {
		g.remove()
	}
}

// remove deletes the group's subgroups and then the group.
func (g pooled) remove() {
	for _, leaf := range g.leaves {
		_ = leaf.g.remove()
	}
	_ = g.group.remove()
}
