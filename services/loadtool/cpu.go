package loadtool

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// clockTicks is USER_HZ, the unit of the CPU times in /proc: 100 on every
// Linux architecture Go supports (the kernel converts to it for user space).
const clockTicks = 100

// maxOthers is how many of the machine's other programs the report names.
const maxOthers = 5

// CPUFigures are the CPU time spent during the load, per process, read from
// /proc: each process's utime+stime over the measured window, in cores (1 =
// one core busy the whole window). The system's processes are this process
// and everything it started (the embedded Postgres with all its backends,
// ClickHouse, tool commands); Others are the busiest of the machine's other
// programs, which share its cores.
type CPUFigures struct {
	WindowSec float64 `json:"windowSec"`
	// Cores is how many cores the machine has.
	Cores int `json:"cores"`
	// MachineBusy is the share of all cores' time not idle (user, system,
	// interrupts, steal), from /proc/stat: 1 = every core busy throughout.
	MachineBusy float64 `json:"machineBusy"`
	// MachineBusyCores is MachineBusy × Cores.
	MachineBusyCores float64 `json:"machineBusyCores"`
	// SystemCores is the sum over System.
	SystemCores float64 `json:"systemCores"`
	// SystemMsPerRun is the system's CPU time per completed run, in ms:
	// on a shared machine it moves less than runs/s does.
	SystemMsPerRun float64 `json:"systemMsPerRun"`
	// System is the system's processes, grouped by what they are.
	System []ProcessCPU `json:"system"`
	// OthersCores is the machine's busy cores outside System: other
	// programs, the kernel's threads and interrupts.
	OthersCores float64 `json:"othersCores"`
	// Others are the busiest other programs, by name, by their own time
	// (not their reaped children's).
	Others []ProcessCPU `json:"others,omitempty"`
}

// ProcessCPU is one group of processes: a process and its descendants.
type ProcessCPU struct {
	Name string `json:"name"`
	// Processes is how many processes of the group were seen (at the
	// window's start or end; one that came and went inside it counts in
	// its parent's reaped children's time, not here).
	Processes int     `json:"processes"`
	Cores     float64 `json:"cores"`
}

// procStat is what the report needs of /proc/<pid>/stat.
type procStat struct {
	pid, ppid int
	name      string
	// start is the process's start time: with pid it names one process,
	// even when the pid is reused.
	start uint64
	// own is utime+stime; reaped is cutime+cstime, the CPU time of
	// children that exited and were waited for. In clock ticks.
	own, reaped uint64
}

// cpuSnapshot is the machine at one moment.
type cpuSnapshot struct {
	at          time.Time
	busy, total uint64 // /proc/stat, clock ticks summed over all cores
	cores       int
	procs       map[int]procStat
}

// cpuSampler measures the CPU of the processes below a root process between
// start and stop.
type cpuSampler struct {
	proc  string // the /proc directory
	self  int
	first cpuSnapshot
}

// startCPU takes the window's first snapshot of /proc for process self and
// its descendants.
func startCPU(proc string, self int) (*cpuSampler, error) {
	s := &cpuSampler{proc: proc, self: self}
	var err error
	s.first, err = snapshot(proc)
	return s, err
}

// stop takes the window's last snapshot and returns the figures.
func (s *cpuSampler) stop() (*CPUFigures, error) {
	last, err := snapshot(s.proc)
	if err != nil {
		return nil, err
	}
	return figures(s.first, last, s.self, s.names()), nil
}

// names are the groups' names: the base of each process's argv[0] (its
// comm, which the kernel cuts to 15 bytes, when the command line is gone).
func (s *cpuSampler) names() func(procStat) string {
	return func(p procStat) string {
		raw, err := os.ReadFile(filepath.Join(s.proc, strconv.Itoa(p.pid), "cmdline"))
		arg0, _, _ := strings.Cut(string(raw), "\x00")
		if f := strings.Fields(arg0); err == nil && len(f) > 0 {
			return filepath.Base(f[0])
		}
		return p.name
	}
}

// snapshot reads /proc/stat and the stat file of every process.
func snapshot(proc string) (cpuSnapshot, error) {
	s := cpuSnapshot{at: time.Now(), procs: map[int]procStat{}}
	var err error
	if s.busy, s.total, s.cores, err = machineTicks(filepath.Join(proc, "stat")); err != nil {
		return s, err
	}
	ents, err := os.ReadDir(proc)
	if err != nil {
		return s, fmt.Errorf("cpu figures: %w", err)
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(proc, e.Name(), "stat"))
		if err != nil {
			continue // exited meanwhile
		}
		if p, err := parseProcStat(pid, string(raw)); err == nil {
			s.procs[pid] = p
		}
	}
	return s, nil
}

// machineTicks sums the "cpu" line of /proc/stat: busy is everything but
// idle and iowait; cores counts the "cpuN" lines.
func machineTicks(file string) (busy, total uint64, cores int, err error) {
	raw, err := os.ReadFile(file) // #nosec G304 -- /proc/stat below the configured /proc
	if err != nil {
		return 0, 0, 0, fmt.Errorf("cpu figures: %w", err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) > 0 && f[0] != "cpu" && strings.HasPrefix(f[0], "cpu"):
			cores++
		case len(f) > 5 && f[0] == "cpu":
			// user nice system idle iowait irq softirq steal guest guest_nice;
			// guest time is already counted in user.
			for i, v := range f[1:min(len(f), 9)] {
				n, err := strconv.ParseUint(v, 10, 64)
				if err != nil {
					return 0, 0, 0, fmt.Errorf("cpu figures: /proc/stat: %w", err)
				}
				total += n
				if i != 3 && i != 4 {
					busy += n
				}
			}
		}
	}
	if total == 0 {
		return 0, 0, 0, errors.New("cpu figures: /proc/stat has no cpu line")
	}
	return busy, total, max(cores, 1), nil
}

// parseProcStat reads /proc/<pid>/stat (proc(5)). The name is in
// parentheses and may hold spaces and parentheses itself, so the fields are
// counted from the last ')'.
func parseProcStat(pid int, raw string) (procStat, error) {
	open, end := strings.IndexByte(raw, '('), strings.LastIndexByte(raw, ')')
	if open < 0 || end < open {
		return procStat{}, errors.New("malformed stat")
	}
	f := strings.Fields(raw[end+1:])
	// f[0] is field 3 (state): field n is f[n-3].
	if len(f) < 20 {
		return procStat{}, errors.New("short stat")
	}
	n := make([]uint64, 0, 5)
	for _, field := range []int{14, 15, 16, 17, 22} { // utime stime cutime cstime starttime
		v, err := strconv.ParseUint(f[field-3], 10, 64)
		if err != nil {
			return procStat{}, err
		}
		n = append(n, v)
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return procStat{}, err
	}
	return procStat{pid: pid, ppid: ppid, name: raw[open+1 : end], start: n[4], own: n[0] + n[1], reaped: n[2] + n[3]}, nil
}

// startCPUFigures starts measuring this process's system and the machine;
// the function it returns ends the window and returns the figures, nil
// (with a note on stderr) where /proc cannot be read.
func startCPUFigures() func() *CPUFigures {
	s, err := startCPU("/proc", os.Getpid())
	return func() *CPUFigures {
		var f *CPUFigures
		if err == nil {
			f, err = s.stop()
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "xbot bench: no CPU figures: %v\n", err)
		}
		return f
	}
}
