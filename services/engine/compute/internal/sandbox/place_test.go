package sandbox

import (
	"os/exec"
	"sync"
	"testing"

	"github.com/xbot-runtime/xbot/services/engine/compute"
)

// fakeGroups is a hierarchy whose groups are plain directories and whose
// counters the test sets; reads counts the counters read.
type fakeGroups struct {
	mu      sync.Mutex
	c       map[string]counters // by the group's first directory
	reads   int
	charged int64 // every group's memory charge
	refills int
	stuck   bool // kill leaves processes behind
}

func (*fakeGroups) mechanism() string                  { return "fake" }
func (*fakeGroups) limit(cgroup, compute.Limits) error { return nil }
func (f *fakeGroups) kill(cgroup) bool                 { f.mu.Lock(); defer f.mu.Unlock(); return !f.stuck }
func (*fakeGroups) procs(g cgroup) string              { return g[0] + "/cgroup.procs" }
func (*fakeGroups) nest(cgroup) error                  { return nil }
func (f *fakeGroups) set(g cgroup, c counters)         { f.mu.Lock(); f.c[g[0]] = c; f.mu.Unlock() }
func (f *fakeGroups) charge(cgroup) (int64, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.charged, true
}
func (f *fakeGroups) refill(cgroup, compute.Limits) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.refills++
	return nil
}
func (f *fakeGroups) counters(g cgroup) counters {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	return f.c[g[0]]
}

// TestLimitCountersAcrossCommands: a limit the box's group hit during one
// command is that command's alone, also when the next reuses its subgroup
// without reading the counters again, and a command started while another
// runs compares against the group as it was when it started.
func TestLimitCountersAcrossCommands(t *testing.T) {
	t.Parallel()
	f := &fakeGroups{c: map[string]counters{}}
	b := &boxLimits{h: f, parent: cgroup{t.TempDir()}, limits: compute.Limits{Pids: 8}, hold: holdTrace}
	t.Cleanup(b.close)
	prepare := func() *placement {
		t.Helper()
		p, err := b.prepare(&exec.Cmd{})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	wantHit := func(what string, p *placement, hit bool) {
		t.Helper()
		lerr := p.finish(0)
		if got := lerr != nil && lerr.Resource == compute.ResourcePids; got != hit {
			t.Errorf("%s: limit error %v, want a pids limit: %t", what, lerr, hit)
		}
	}

	first := prepare()
	if f.reads != 0 {
		t.Errorf("the first command read %d counters of groups it just created, want 0", f.reads)
	}
	f.set(b.group, counters{pidsLimit: 1})
	wantHit("the command during which the group hit its limit", first, true)

	second := prepare() // reuses first's subgroup
	if second.leaf[0] != first.leaf[0] {
		t.Fatalf("the second command got subgroup %s, want the first's %s", second.leaf[0], first.leaf[0])
	}
	wantHit("the next command", second, false)

	a := prepare()
	f.set(b.group, counters{pidsLimit: 2}) // while a runs alone
	c := prepare()                         // while a runs: reads the group now
	wantHit("the command that started after the limit was hit", c, false)
	wantHit("the command that ran when the limit was hit", a, true)
	wantHit("a command after both", prepare(), false)
}
