package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/xbot-runtime/xbot/services/engine/compute"
)

// v1Root is where the cgroup v1 controllers are mounted, one directory each.
const v1Root = "/sys/fs/cgroup"

// cfsPeriod is the CFS period of the cpu quota in microseconds: the
// kernel's default, 100 ms.
const cfsPeriod = 100000

// v1Controllers are the hierarchies a v1 group has a directory in, in the
// order of a cgroup's directories.
var v1Controllers = []string{"memory", "pids", "cpu"}

// cgroupV1 is the cgroup v1 mechanism: a directory per controller.
type cgroupV1 struct{}

func (cgroupV1) mechanism() string { return "cgroup v1" }

// v1Parent is this process's own group in each v1 controller, below
// which the sandboxes' groups are created.
func v1Parent() (cgroup, error) {
	var g cgroup
	for _, c := range v1Controllers {
		own, ok := ownCgroup(c)
		mount := filepath.Join(v1Root, c)
		if _, err := os.Stat(filepath.Join(mount, "cgroup.procs")); !ok || err != nil {
			return nil, fmt.Errorf("cgroup v1: the %s controller is not mounted at %s", c, mount)
		}
		g = append(g, filepath.Join(mount, own))
	}
	return g, nil
}

func (cgroupV1) limit(g cgroup, l compute.Limits) error {
	mem, pids, cpu := g[0], g[1], g[2]
	if l.MemoryBytes > 0 {
		v := strconv.FormatInt(l.MemoryBytes, 10)
		if err := writeFile(filepath.Join(mem, "memory.limit_in_bytes"), v); err != nil {
			return err
		}
		// memory+swap equal to memory: the group cannot swap past its limit.
		if err := writeOptional(filepath.Join(mem, "memory.memsw.limit_in_bytes"), v); err != nil {
			return err
		}
	}
	if l.Pids > 0 {
		if err := writeFile(filepath.Join(pids, "pids.max"), strconv.FormatInt(l.Pids, 10)); err != nil {
			return err
		}
	}
	if l.CPUMillis > 0 {
		if err := writeFile(filepath.Join(cpu, "cpu.cfs_period_us"), strconv.Itoa(cfsPeriod)); err != nil {
			return err
		}
		quota := strconv.FormatInt(l.CPUMillis*cfsPeriod/1000, 10)
		if err := writeFile(filepath.Join(cpu, "cpu.cfs_quota_us"), quota); err != nil {
			return err
		}
	}
	return nil
}

func (cgroupV1) charge(g cgroup) (int64, bool) {
	return readInt(filepath.Join(g[0], "memory.usage_in_bytes"))
}

func (cgroupV1) refill(g cgroup, l compute.Limits) error {
	if l.CPUMillis <= 0 {
		return nil
	}
	return writeFile(filepath.Join(g[2], "cpu.cfs_quota_us"), strconv.FormatInt(l.CPUMillis*cfsPeriod/1000, 10))
}

// counters reads oom_kill of memory.oom_control and max of pids.events;
// v1 counts them only in the group where they happened.
func (cgroupV1) counters(g cgroup) counters {
	return counters{
		oomKills:  readKey(filepath.Join(g[0], "memory.oom_control"), "oom_kill"),
		pidsLimit: readKey(filepath.Join(g[1], "pids.events"), "max"),
	}
}

// kill kills the processes listed in the pids hierarchy, where every
// process of the group is.
func (v cgroupV1) kill(g cgroup) bool { return killProcs(v.procs(g)) }

func (cgroupV1) procs(g cgroup) string { return filepath.Join(g[1], "cgroup.procs") }

// nest is nothing to do in v1: every controller applies to subgroups.
func (cgroupV1) nest(cgroup) error { return nil }
