package sandbox

import (
	"os"
	"testing"
)

// TestReapRemovesGroupsOfGoneExecutors: a box group named for a process
// that no longer exists, with a command subgroup, is removed at start; the
// groups of live processes stay.
func TestReapRemovesGroupsOfGoneExecutors(t *testing.T) {
	t.Parallel()
	host, err := v1Parent()
	if err != nil || os.Getuid() != 0 {
		t.Skipf("no writable cgroup v1 here: %v", err)
	}
	// The groups live below a parent of the test's own: every provider that
	// starts (other tests', other test processes') reaps the stale groups
	// below this process's group, and would take this test's half made.
	parent := host.child(groupName("reaptest"))
	if err := parent.create(); err != nil {
		t.Skipf("cannot create cgroups here: %v", err)
	}
	t.Cleanup(func() { _ = parent.remove() })
	const gone = "xbot.999999999.box1" // above pid_max: never a live process
	stale := parent.child(gone)
	if err := stale.create(); err != nil {
		t.Fatal(err)
	}
	if err := stale.child("xbot.999999999.cmd2").create(); err != nil {
		t.Fatal(err)
	}
	live := parent.child(groupName("box"))
	if err := live.create(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = live.remove() })
	reap(cgroupV1{}, parent)
	for _, d := range stale {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("stale group %s remains: %v", d, err)
		}
	}
	for _, d := range live {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("live group %s was removed: %v", d, err)
		}
	}
}
