package loadtool

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// figures compares two snapshots: the processes below self (self included)
// are the system, grouped by self's child they descend from; the rest are
// others, grouped by name (their own time only). A system process's time
// counts from the first snapshot (all of it when it started later), plus
// the time of its children that exited and were reaped in between, less
// what those had used before the first snapshot when it saw them. A
// process that exited in between is not counted itself: its parent's
// reaped time holds it.
func figures(first, last cpuSnapshot, self int, name func(procStat) string) *CPUFigures {
	window := last.at.Sub(first.at).Seconds()
	f := &CPUFigures{WindowSec: window, Cores: last.cores}
	if window <= 0 {
		return f
	}
	if dt := last.total - first.total; dt > 0 {
		f.MachineBusy = float64(last.busy-first.busy) / float64(dt)
	}
	f.MachineBusyCores = f.MachineBusy * float64(last.cores)
	system, others := map[string]*ProcessCPU{}, map[string]*ProcessCPU{}
	add := func(groups map[string]*ProcessCPU, name string, n int, ticks int64) {
		g := groups[name]
		if g == nil {
			g = &ProcessCPU{Name: name}
			groups[name] = g
		}
		g.Processes += n
		g.Cores += float64(ticks) / clockTicks / window
	}
	name = memo(name)
	selfName := name(last.procs[self])
	before := reapedBefore(first, last)
	for _, p := range last.procs {
		own, reaped := int64(p.own), int64(p.reaped)-before[p.pid]
		if was, ok := first.procs[p.pid]; ok && was.start == p.start {
			own, reaped = own-int64(was.own), reaped-int64(was.reaped)
		}
		switch top := topBelow(last.procs, p.pid, self); {
		case p.pid == self:
			add(system, selfName, 1, own)
			add(system, selfName+": exited children (tool commands)", 0, max(reaped, 0))
		case top != 0:
			add(system, name(last.procs[top]), 1, own+max(reaped, 0))
		default: // own time only: a shell's reaped time may hold what its children did before the window
			add(others, p.name, 1, own)
		}
	}
	f.System = sorted(system, 0)
	for _, g := range f.System {
		f.SystemCores += g.Cores
	}
	f.OthersCores = max(f.MachineBusyCores-f.SystemCores, 0)
	f.Others = sorted(others, maxOthers)
	return f
}

// reapedBefore is, by process, the time its descendants that exited
// between the snapshots had used before the first: reaped time counts their
// whole lives, and climbs the tree as each parent that exits is reaped in
// turn, so it is taken off the nearest ancestor still alive at the end.
func reapedBefore(first, last cpuSnapshot) map[int]int64 {
	alive := func(pid int) bool {
		p, ok := first.procs[pid]
		now, still := last.procs[pid]
		return ok && still && now.start == p.start
	}
	out := map[int]int64{}
	for pid, p := range first.procs {
		if alive(pid) {
			continue
		}
		up := p.ppid
		for range len(first.procs) { // bounded: a pid cycle cannot loop forever
			if alive(up) || first.procs[up].ppid == 0 {
				break
			}
			up = first.procs[up].ppid
		}
		out[up] += int64(p.own + p.reaped)
	}
	return out
}

// topBelow returns the child of root that pid descends from (pid itself
// when it is root's child), or 0 when pid does not descend from root.
func topBelow(procs map[int]procStat, pid, root int) int {
	for range len(procs) { // bounded: a pid cycle cannot loop forever
		p, ok := procs[pid]
		if !ok || p.ppid == 0 || pid == root {
			return 0
		}
		if p.ppid == root {
			return pid
		}
		pid = p.ppid
	}
	return 0
}

// sorted lists the groups, busiest first; at most n (0: all) of those that
// used at least a thousandth of a core.
func sorted(groups map[string]*ProcessCPU, n int) []ProcessCPU {
	var out []ProcessCPU
	for _, g := range groups {
		if n == 0 || g.Cores >= 0.001 {
			out = append(out, *g)
		}
	}
	slices.SortFunc(out, func(a, b ProcessCPU) int {
		return cmp.Or(cmp.Compare(b.Cores, a.Cores), cmp.Compare(a.Name, b.Name))
	})
	if n > 0 && len(out) > n {
		out = out[:n]
	}
	return out
}

// memo remembers name's answer for each process.
func memo(name func(procStat) string) func(procStat) string {
	seen := map[int]string{}
	return func(p procStat) string {
		n, ok := seen[p.pid]
		if !ok {
			n = name(p)
			seen[p.pid] = n
		}
		return n
	}
}

// perRun sets SystemMsPerRun for runs completed runs and returns f.
func (f *CPUFigures) perRun(runs int) *CPUFigures {
	if f != nil && runs > 0 {
		f.SystemMsPerRun = 1000 * f.SystemCores * f.WindowSec / float64(runs)
	}
	return f
}

// markdown is the CPU table of the report ("" without figures).
func (f *CPUFigures) markdown() string {
	if f == nil {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\nCPU during the load, from /proc (utime+stime over the %.1f s window, in cores): the machine's %d "+
		"cores were %.0f %% busy (%.2f cores); the system's own processes used %.2f cores, %.1f ms of CPU per run.\n\n",
		f.WindowSec, f.Cores, 100*f.MachineBusy, f.MachineBusyCores, f.SystemCores, f.SystemMsPerRun)
	b.WriteString("| process | processes | cores |\n|---|---:|---:|\n")
	for _, g := range f.System {
		fmt.Fprintf(&b, "| %s | %d | %.2f |\n", g.Name, g.Processes, g.Cores)
	}
	others := make([]string, len(f.Others))
	for i, g := range f.Others {
		others[i] = fmt.Sprintf("%s %.2f", g.Name, g.Cores)
	}
	fmt.Fprintf(&b, "| everything else on the machine (busiest: %s) | | %.2f |\n", strings.Join(others, ", "), f.OthersCores)
	return b.String()
}
