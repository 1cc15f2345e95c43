//go:build linux

package devstack

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// sysProcAttr puts the child in its own process group (so Stop can kill the
// whole server) and has the kernel send it SIGINT, PostgreSQL's fast
// shutdown, when the OS thread that started it dies. Go sets the death signal
// after switching credentials, so it survives running as another user.
func sysProcAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGINT, Credential: cred}
}

// leftovers lists the live (not zombie) processes of a server: those in
// process group pgid (0: none) and those whose working directory is pgdata.
// PostgreSQL's children call setsid(), so they leave the postmaster's group;
// but every server process works in the data directory. Zombies are ignored:
// they are dead, and reaping them is up to the machine's init process.
func leftovers(pgid int, pgdata string) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // exited meanwhile
		}
		state, group, ok := parseStat(string(stat))
		if !ok || state == "Z" || state == "X" {
			continue
		}
		if cwd, err := os.Readlink("/proc/" + e.Name() + "/cwd"); (pgid > 0 && group == pgid) || (err == nil && cwd == pgdata) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// parseStat extracts state and process group from /proc/PID/stat, whose
// second field (comm) may contain spaces and parentheses.
func parseStat(stat string) (state string, pgid int, ok bool) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return "", 0, false
	}
	f := strings.Fields(stat[i+1:])
	if len(f) < 3 {
		return "", 0, false
	}
	pgid, err := strconv.Atoi(f[2])
	return f[0], pgid, err == nil
}

// processCmdline returns the argv of a process, or ok=false if unknown.
func processCmdline(pid int) (args []string, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return nil, false
	}
	return strings.Split(strings.TrimRight(string(b), "\x00"), "\x00"), true
}

// sysProcAttrKillOnParentDeath is sysProcAttr for a server whose graceful
// shutdown needs its peers (a Kafka broker's controlled shutdown waits for the
// quorum): when the caller dies, every peer gets SIGKILL at once instead of a
// signal each would answer by waiting for the others.
func sysProcAttrKillOnParentDeath() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// processState is the scheduler state of pid from /proc (R running, S
// sleeping, T stopped, Z zombie, …), or "gone".
func processState(pid int) string {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "gone"
	}
	state, _, ok := parseStat(string(stat))
	if !ok {
		return "unknown"
	}
	return state
}
