package loadtool

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeProc writes a /proc tree: stat holds the "cpu" line's fields, procs
// each process's stat line and, where given, its command line.
type fakeProc struct {
	t   *testing.T
	dir string
}

func (f fakeProc) machine(user, system, idle uint64) {
	f.write("stat", fmt.Sprintf("cpu  %d 0 %d %d 0 0 0 0 0 0\ncpu0 0 0 0 0 0 0 0 0 0 0\ncpu1 0 0 0 0 0 0 0 0 0 0\nintr 1\n",
		user, system, idle))
}

// proc writes pid's stat: utime, stime, cutime, cstime in clock ticks.
func (f fakeProc) proc(pid int, comm string, ppid int, start, utime, stime, cutime, cstime uint64, cmdline string) {
	f.write(fmt.Sprintf("%d/stat", pid), fmt.Sprintf("%d (%s) S %d 1 1 0 -1 4194560 10 0 0 0 %d %d %d %d 20 0 4 0 %d 1000 10\n",
		pid, comm, ppid, utime, stime, cutime, cstime, start))
	if cmdline != "" {
		f.write(fmt.Sprintf("%d/cmdline", pid), cmdline)
	}
}

func (f fakeProc) remove(pid int) {
	if err := os.RemoveAll(filepath.Join(f.dir, fmt.Sprint(pid))); err != nil {
		f.t.Fatal(err)
	}
}

func (f fakeProc) write(name, data string) {
	p := filepath.Join(f.dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
		f.t.Fatal(err)
	}
}

// TestCPUFigures: over a 2 s window (200 ticks = one core) the system is
// this process (own time, and its reaped children's) and everything below
// it, grouped by the child it descends from; a reused pid counts as a new
// process, and what children that exited had used before the window is
// not counted again in their parent's reaped time; the rest of the machine
// is others.
func TestCPUFigures(t *testing.T) {
	t.Parallel()
	f := fakeProc{t: t, dir: t.TempDir()}
	f.machine(1000, 1000, 8000)
	f.proc(1, "init", 0, 1, 5, 5, 0, 0, "/sbin/init\x00")
	f.proc(100, "xbot", 1, 50, 80, 20, 4, 6, "/tmp/b/xbot\x00bench\x00")
	f.proc(200, "postgres", 100, 60, 40, 10, 0, 0, "/usr/lib/postgresql/15/bin/postgres\x00-D\x00d\x00")
	f.proc(201, "postgres: a) (b", 200, 61, 10, 0, 0, 0, "postgres: xbot xbot 127.0.0.1(5) idle")
	f.proc(300, "clickhouse-serv", 100, 5, 500, 500, 0, 0, "/usr/sbin/clickhouse-server\x00--config-file=c\x00")
	f.proc(400, "sh", 100, 70, 1, 1, 0, 0, "")
	f.proc(500, "go", 1, 80, 0, 0, 0, 0, "/usr/bin/go\x00test\x00")
	f.proc(600, "sh", 100, 3, 1, 0, 0, 0, "/bin/sh\x00")
	f.proc(601, "go", 600, 4, 300, 0, 7, 0, "") // exits in the window with its child
	f.proc(602, "x.test", 601, 5, 900, 0, 0, 0, "")
	first, err := snapshot(f.dir)
	if err != nil {
		t.Fatal(err)
	}
	f.machine(1000+300, 1000+90, 8000+10) // 390 of 400 ticks busy
	// 0.5 core; reaped: 0.1 core in the window, plus the whole lives of the sh
	// and the first clickhouse-server (1,002 ticks, not counted again).
	f.proc(100, "xbot", 1, 50, 80+80, 20+20, 4+15+1002, 6+5, "/tmp/b/xbot\x00bench\x00")
	f.proc(200, "postgres", 100, 60, 40+20, 10, 0, 10, "/usr/lib/postgresql/15/bin/postgres\x00-D\x00d\x00")
	f.proc(201, "postgres: a) (b", 200, 61, 10+30, 0, 0, 0, "postgres: xbot xbot 127.0.0.1(5) idle")
	f.proc(202, "postgres", 200, 90, 15, 5, 0, 0, "postgres: autovacuum")
	f.proc(300, "clickhouse-serv", 100, 95, 20, 10, 0, 0, "/usr/sbin/clickhouse-server\x00--config-file=c\x00")
	f.remove(400)
	f.proc(500, "go", 1, 80, 30, 10, 0, 0, "/usr/bin/go\x00test\x00")
	f.remove(601)
	f.remove(602) // 10 more ticks each in the window: 0.1 core for sh
	f.proc(600, "sh", 100, 3, 1, 0, 300+7+900+20, 0, "/bin/sh\x00")
	last, err := snapshot(f.dir)
	if err != nil {
		t.Fatal(err)
	}
	last.at = first.at.Add(2 * time.Second)
	s := &cpuSampler{proc: f.dir, self: 100}
	got := figures(first, last, 100, s.names())

	want := []ProcessCPU{{Name: "xbot", Processes: 1, Cores: 0.5}, {Name: "postgres", Processes: 3, Cores: 0.4},
		{Name: "clickhouse-server", Processes: 1, Cores: 0.15}, {Name: "sh", Processes: 1, Cores: 0.1},
		{Name: "xbot: exited children (tool commands)", Processes: 0, Cores: 0.1}}
	if len(got.System) != len(want) {
		t.Fatalf("system = %+v, want %+v", got.System, want)
	}
	for i, g := range got.System {
		if g.Name != want[i].Name || g.Processes != want[i].Processes || !near(g.Cores, want[i].Cores) {
			t.Errorf("system[%d] = %+v, want %+v", i, g, want[i])
		}
	}
	if got.Cores != 2 || !near(got.MachineBusy, 0.975) || !near(got.MachineBusyCores, 1.95) ||
		!near(got.SystemCores, 1.25) || !near(got.OthersCores, 0.7) {
		t.Errorf("machine: %+v; want 2 cores 97.5 %% busy (1.95), system 1.25, others 0.7", got)
	}
	if len(got.Others) != 1 || got.Others[0].Name != "go" || !near(got.Others[0].Cores, 0.2) {
		t.Errorf("others = %+v, want go 0.2 alone (init used nothing)", got.Others)
	}
	md := got.markdown()
	for _, row := range []string{"| postgres | 3 | 0.40 |", "| xbot | 1 | 0.50 |", "98 % busy (1.95 cores)",
		"| everything else on the machine (busiest: go 0.20) | | 0.70 |"} {
		if !strings.Contains(md, row) {
			t.Errorf("markdown lacks %q:\n%s", row, md)
		}
	}
}

func TestParseProcStat(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{"", "1 (x", "1 (x) S 0 1", "1 (x) S a 1 1 0 -1 0 0 0 0 0 1 2 3 4 20 0 1 0 9"} {
		if _, err := parseProcStat(1, raw); err == nil {
			t.Errorf("parseProcStat(%q) succeeded", raw)
		}
	}
	p, err := parseProcStat(7, "7 (a) (b)) R 3 1 1 0 -1 0 0 0 0 0 1 2 3 4 20 0 1 0 9 0")
	if err != nil || p.name != "a) (b)" || p.ppid != 3 || p.own != 3 || p.reaped != 7 || p.start != 9 {
		t.Fatalf("parseProcStat = %+v, %v", p, err)
	}
}

// TestCPUFiguresOfThisProcess reads the real /proc: this process is in the
// system, and the machine is never more than fully busy.
func TestCPUFiguresOfThisProcess(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc here")
	}
	s, err := startCPU("/proc", os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.stop()
	if err != nil {
		t.Fatal(err)
	}
	if got.MachineBusy < 0 || got.MachineBusy > 1 || got.Cores < 1 || len(got.System) == 0 {
		t.Fatalf("figures of this process: %+v", got)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
