package sandbox

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/services/engine/compute"
)

// pooledBox is a box of limits l whose closed group goes to pool, with a
// fake hierarchy below dir.
func pooledBox(f *fakeGroups, pool *groupPool, dir string, l compute.Limits) *boxLimits {
	return &boxLimits{h: f, parent: cgroup{dir}, limits: l, hold: holdTrace, pool: pool}
}

// runOne prepares a command of b and finishes it, setting the group's
// counters to during while it runs, and returns the limit it hit.
func runOne(t *testing.T, f *fakeGroups, b *boxLimits, during *counters) *compute.LimitError {
	t.Helper()
	p, err := b.prepare(&exec.Cmd{})
	if err != nil {
		t.Fatal(err)
	}
	if during != nil {
		f.set(b.group, *during)
	}
	return p.finish(0)
}

func exists(dir string) bool { _, err := os.Stat(dir); return err == nil }

// TestAClosedBoxsGroupServesTheNextBoxWithItsLimits: the group of a closed
// box, with its subgroup, is the next box's when their limits are the same
// (the workspace limit aside, which no cgroup enforces); its CPU period is
// refilled, and a limit the first box hit is not the second's. A box with
// other limits gets a group of its own.
func TestAClosedBoxsGroupServesTheNextBoxWithItsLimits(t *testing.T) {
	t.Parallel()
	f := &fakeGroups{c: map[string]counters{}}
	pool, dir := newGroupPool(f), t.TempDir()
	l := compute.Limits{MemoryBytes: 1 << 30, Pids: 8, CPUMillis: 1000, WorkspaceBytes: 1 << 20}

	a := pooledBox(f, pool, dir, l)
	if lerr := runOne(t, f, a, &counters{pidsLimit: 1}); lerr == nil || lerr.Resource != compute.ResourcePids {
		t.Fatalf("the first box's command: %v, want its pids limit", lerr)
	}
	group, leaf := a.group, a.idle[0].g
	a.close()
	if pool.n != 1 || a.group != nil || !exists(group[0]) || !exists(leaf[0]) {
		t.Fatalf("after the first box closed: %d pooled, its group %v, on disk %t %t; want it pooled whole",
			pool.n, a.group, exists(group[0]), exists(leaf[0]))
	}

	other := l
	other.WorkspaceBytes = 1 << 30
	b := pooledBox(f, pool, dir, other)
	t.Cleanup(b.close)
	reads, refills := f.reads, f.refills
	p, err := b.prepare(&exec.Cmd{})
	if err != nil {
		t.Fatal(err)
	}
	if b.group[0] != group[0] || p.leaf[0] != leaf[0] {
		t.Fatalf("the next box runs in %s / %s, want the pooled %s / %s", b.group[0], p.leaf[0], group[0], leaf[0])
	}
	if f.refills != refills+1 || f.reads != reads {
		t.Errorf("taking the group refilled its CPU %d times and read %d counters, want once and none",
			f.refills-refills, f.reads-reads)
	}
	if lerr := p.finish(0); lerr != nil {
		t.Errorf("the next box's command reports %v, which the first box hit", lerr)
	}
	if lerr := runOne(t, f, b, &counters{pidsLimit: 2}); lerr == nil || lerr.Resource != compute.ResourcePids {
		t.Errorf("a limit the next box hits itself: %v, want its pids limit", lerr)
	}

	c := pooledBox(f, pool, dir, compute.Limits{MemoryBytes: 1 << 30, Pids: 16, CPUMillis: 1000})
	t.Cleanup(c.close)
	b.close()
	if runOne(t, f, c, nil); c.group[0] == group[0] || pool.n != 1 {
		t.Errorf("a box with other limits got group %s (the pooled one %s), %d left pooled; want a new one and 1",
			c.group[0], group[0], pool.n)
	}
}

// TestAGroupIsHandedOnOnlyEmptyAndNearlyUncharged: a group that a command
// left processes in, or with more memory charged than a new group would
// have by a little, is removed when its box closes, never pooled; so is one
// the full pool has no room for.
func TestAGroupIsHandedOnOnlyEmptyAndNearlyUncharged(t *testing.T) {
	t.Parallel()
	l := compute.Limits{MemoryBytes: 64 << 20, Pids: 8}
	for _, tc := range []struct {
		name    string
		stuck   bool
		charged int64
		full    bool
	}{
		{name: "processes left", stuck: true},
		{name: "a sixteenth of its memory limit charged, and a byte", charged: 4<<20 + 1},
		{name: "the pool full", full: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := &fakeGroups{c: map[string]counters{}}
			pool, dir := newGroupPool(f), t.TempDir()
			if tc.full {
				filler := compute.Limits{Pids: 9} // none the box takes
				for i := range poolMax {
					pg := pooled{group: cgroup{t.TempDir()}}
					if !pool.put(filler, pg) {
						t.Fatalf("the pool refused group %d of %d", i+1, poolMax)
					}
				}
			}
			f.stuck, f.charged = tc.stuck, tc.charged
			b := pooledBox(f, pool, dir, l)
			runOne(t, f, b, nil)
			group := b.group
			pooledBefore := pool.n
			b.close()
			if pool.n != pooledBefore || exists(group[0]) {
				t.Errorf("%d pooled (before %d), the group on disk %t; want it removed", pool.n, pooledBefore, exists(group[0]))
			}
		})
	}
}

// TestPooledGroupsAreRemovedOnceIdle: a group no box took within the pool's
// idle time is removed, with its subgroups; one that waited less stays,
// and the timer is armed again for it.
func TestPooledGroupsAreRemovedOnceIdle(t *testing.T) {
	t.Parallel()
	f := &fakeGroups{c: map[string]counters{}}
	pool, dir := newGroupPool(f), t.TempDir()
	start := time.Now()
	clock := start
	pool.now = func() time.Time { return clock }
	b := pooledBox(f, pool, dir, compute.Limits{Pids: 8})
	runOne(t, f, b, nil)
	group, leaf := b.group, b.idle[0].g
	b.close()
	pool.mu.Lock()
	armed := pool.timer != nil
	pool.mu.Unlock()
	if pool.n != 1 || !armed {
		t.Fatalf("after the box closed: %d pooled, timer armed %t; want 1 and armed", pool.n, armed)
	}

	clock = start.Add(pool.idle - time.Millisecond)
	pool.expire() // as its timer would, early
	pool.mu.Lock()
	n, armed := pool.n, pool.timer != nil
	pool.mu.Unlock()
	if n != 1 || !armed || !exists(group[0]) {
		t.Fatalf("before the idle time: %d pooled, timer armed %t, group on disk %t; want it kept and the timer armed",
			n, armed, exists(group[0]))
	}

	clock = start.Add(pool.idle)
	pool.expire()
	pool.mu.Lock()
	n = pool.n
	pool.mu.Unlock()
	if exists(group[0]) || exists(leaf[0]) || n != 0 {
		t.Errorf("after the idle time: group on disk %t, subgroup %t, %d pooled; want all gone",
			exists(group[0]), exists(leaf[0]), n)
	}
}

// TestAClosedPoolRemovesItsGroupsAndKeepsNoMore: closing the provider
// removes the pooled groups; a box closed afterwards removes its own.
func TestAClosedPoolRemovesItsGroupsAndKeepsNoMore(t *testing.T) {
	t.Parallel()
	f := &fakeGroups{c: map[string]counters{}}
	pool, dir := newGroupPool(f), t.TempDir()
	l := compute.Limits{Pids: 8}
	a, b := pooledBox(f, pool, dir, l), pooledBox(f, pool, dir, l)
	runOne(t, f, a, nil)
	runOne(t, f, b, nil)
	pooledGroup, later := a.group, b.group
	a.close()
	pool.close()
	if exists(pooledGroup[0]) || pool.n != 0 || pool.timer != nil {
		t.Errorf("after the pool closed: the pooled group on disk %t, %d pooled, timer armed %t; want none",
			exists(pooledGroup[0]), pool.n, pool.timer != nil)
	}
	b.close()
	if exists(later[0]) || pool.n != 0 {
		t.Errorf("a box closed after the pool: its group on disk %t, %d pooled; want it removed", exists(later[0]), pool.n)
	}
}
