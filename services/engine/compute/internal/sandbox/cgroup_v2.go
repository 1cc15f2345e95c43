package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/xbot-runtime/xbot/services/engine/compute"
)

// v2Mount is where the unified (cgroup v2) hierarchy is mounted on a host
// that runs cgroup v2 only.
const v2Mount = "/sys/fs/cgroup"

// v2Needed are the controllers a v2 parent must delegate.
var v2Needed = []string{"memory", "pids", "cpu"}

// cgroupV2 is the unified hierarchy: one directory per group.
type cgroupV2 struct{}

func (cgroupV2) mechanism() string { return "cgroup v2" }

// v2Parent is the group below which the sandboxes' groups are created:
// parent, or this process's own group when parent is "". The memory, pids
// and cpu controllers are enabled for its children, so it must have them
// (delegated) and, unless it is the root, no processes of its own: a group
// whose controllers are enabled for children cannot hold processes.
func v2Parent(parent string) (cgroup, error) {
	if parent == "" {
		own, ok := ownCgroup("")
		if _, err := os.Stat(filepath.Join(v2Mount, "cgroup.controllers")); !ok || err != nil {
			return nil, errors.New("cgroup v2: no unified hierarchy at " + v2Mount)
		}
		parent = filepath.Join(v2Mount, own)
	}
	if err := enableV2(parent); err != nil {
		return nil, err
	}
	return cgroup{parent}, nil
}

// enableV2 enables the needed controllers for dir's children.
func enableV2(dir string) error {
	data, err := os.ReadFile(filepath.Join(dir, "cgroup.controllers")) // #nosec G304 -- the configured cgroup parent
	if err != nil {
		return fmt.Errorf("cgroup v2: %w", err)
	}
	have := strings.Fields(string(data))
	var add []string
	for _, c := range v2Needed {
		found := false
		for _, h := range have {
			found = found || h == c
		}
		if !found {
			return fmt.Errorf("cgroup v2: controller %s is not delegated to %s", c, dir)
		}
		add = append(add, "+"+c)
	}
	if err := writeFile(filepath.Join(dir, "cgroup.subtree_control"), strings.Join(add, " ")); err != nil {
		return fmt.Errorf("cgroup v2: enable %s in %s (a group with processes cannot delegate; "+
			"set a dedicated cgroup parent): %w", strings.Join(v2Needed, ", "), dir, err)
	}
	return nil
}

func (cgroupV2) limit(g cgroup, l compute.Limits) error {
	d := g[0]
	if l.MemoryBytes > 0 {
		if err := writeFile(filepath.Join(d, "memory.max"), strconv.FormatInt(l.MemoryBytes, 10)); err != nil {
			return err
		}
		if err := writeOptional(filepath.Join(d, "memory.swap.max"), "0"); err != nil {
			return err
		}
	}
	if l.Pids > 0 {
		if err := writeFile(filepath.Join(d, "pids.max"), strconv.FormatInt(l.Pids, 10)); err != nil {
			return err
		}
	}
	if l.CPUMillis > 0 {
		quota := strconv.FormatInt(l.CPUMillis*cfsPeriod/1000, 10)
		if err := writeFile(filepath.Join(d, "cpu.max"), quota+" "+strconv.Itoa(cfsPeriod)); err != nil {
			return err
		}
	}
	return nil
}

func (cgroupV2) charge(g cgroup) (int64, bool) {
	return readInt(filepath.Join(g[0], "memory.current"))
}

func (cgroupV2) refill(g cgroup, l compute.Limits) error {
	if l.CPUMillis <= 0 {
		return nil
	}
	quota := strconv.FormatInt(l.CPUMillis*cfsPeriod/1000, 10)
	return writeFile(filepath.Join(g[0], "cpu.max"), quota+" "+strconv.Itoa(cfsPeriod))
}

// counters reads oom_kill of memory.events and max of pids.events.
func (cgroupV2) counters(g cgroup) counters {
	return counters{
		oomKills:  readKey(filepath.Join(g[0], "memory.events"), "oom_kill"),
		pidsLimit: readKey(filepath.Join(g[0], "pids.events"), "max"),
	}
}

// kill uses cgroup.kill (Linux 5.14+), which kills atomically, then kills
// what is left one by one (older kernels); an empty group is left alone.
func (v cgroupV2) kill(g cgroup) bool {
	if len(readPids(v.procs(g))) == 0 {
		return true
	}
	_ = writeFile(filepath.Join(g[0], "cgroup.kill"), "1")
	return killProcs(v.procs(g))
}

func (cgroupV2) procs(g cgroup) string { return filepath.Join(g[0], "cgroup.procs") }

// nest enables the controllers for g's children.
func (cgroupV2) nest(g cgroup) error { return enableV2(g[0]) }
