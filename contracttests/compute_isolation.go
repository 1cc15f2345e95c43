package contracttests

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/services/engine/compute"
	"github.com/xbot-runtime/xbot/services/engine/compute/computetest"
)

// computeIsolation runs the checks that hold for a provider that isolates
// its commands from the host: the kernel's settings are read-only to them,
// no process of a command runs as host root, and the host's path of the
// sandbox's directories is nowhere to be seen. A provider whose commands run
// at host paths (local: no isolation) skips them.
func computeIsolation(t *testing.T, newProvider func(t *testing.T) compute.Provider) {
	tests := []struct {
		name string
		fn   func(t *testing.T, p compute.Provider)
	}{
		{"KernelSettingsReadOnly", computeKernelReadOnly},
		{"HostUIDNotRoot", computeHostUIDNotRoot},
		{"HostPathsHidden", computeHostPathsHidden},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := newProvider(t)
			sb := openSandbox(t, p, newKey("isolation"), "s", "r")
			if pwd := mustExec(t, sb, compute.ExecRequest{Command: "pwd"}); pwd != sb.Paths().Workspace+"\n" {
				t.Skipf("%s runs commands at host paths (cwd %q): it does not isolate", p.Name(), strings.TrimSpace(pwd))
			}
			tc.fn(t, p)
		})
	}
}

// kernelKnobs are files of /proc whose writing reconfigures the host's
// kernel; core_pattern and modprobe name programs the kernel runs as root.
var kernelKnobs = []string{
	"/proc/sys/kernel/core_pattern", "/proc/sys/kernel/modprobe", "/proc/sys/kernel/panic",
	"/proc/sys/vm/overcommit_memory", "/proc/sys/fs/protected_symlinks",
}

// computeKernelReadOnly writes each knob's own value back (harmless if it
// wrongly succeeds) and expects every write to fail, as well as sysrq.
func computeKernelReadOnly(t *testing.T, p compute.Provider) {
	sb := openSandbox(t, p, newKey("kernel"), "s", "r")
	for _, knob := range kernelKnobs {
		cmd := `f=` + knob + `; test -r "$f" || exit 0; v=$(cat "$f") || exit 0; ` +
			`if (printf '%s\n' "$v" > "$f") 2>/dev/null; then echo writable; fi`
		if out := mustExec(t, sb, compute.ExecRequest{Command: cmd}); out != "" {
			t.Errorf("%s is writable from the sandbox", knob)
		}
	}
	out := mustExec(t, sb, compute.ExecRequest{Command: `if (: > /proc/sysrq-trigger) 2>/dev/null; then echo writable; fi`})
	if out != "" {
		t.Error("/proc/sysrq-trigger is writable from the sandbox")
	}
}

// computeHostUIDNotRoot runs a command that sleeps and reads, on the host,
// the credentials of every process carrying its marker — the command, its
// shell and whatever launched them: none may be uid or gid 0.
func computeHostUIDNotRoot(t *testing.T, p compute.Provider) {
	sb := openSandbox(t, p, newKey("uid"), "s", "r")
	marker := newMarker()
	ctx, cancel := context.WithCancel(testCtx(t))
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = sb.Exec(ctx, compute.ExecRequest{Command: "touch started; exec sleep " + marker})
	}()
	waitFor(t, 30*time.Second, "the sleeping command", func() bool {
		_, _, err := sb.ReadFile(ctx, "started", 0)
		return err == nil && len(markedPIDs(marker)) > 0
	})
	for _, pid := range markedPIDs(marker) {
		for _, field := range []string{"Uid:", "Gid:"} {
			ids := statusField(pid, field)
			for _, id := range ids {
				if id == "0" {
					t.Errorf("process %s (%.80s) runs with host %s %v", pid, cmdline(pid), field, ids)
					break
				}
			}
		}
	}
	cancel()
	<-done
}

// computeHostPathsHidden: the provider's base directory lies below the
// test's temporary directory (see ComputeProvider); that host path appears
// neither in the command's environment, its working directory, /proc/mounts
// nor the mount points of /proc/self/mountinfo.
//
// Not checked: the fourth field of mountinfo, the path of a bind mount's
// source within its filesystem, which the kernel shows to every process.
func computeHostPathsHidden(t *testing.T, p compute.Provider) {
	host := filepath.Dir(t.TempDir())
	sb := openSandbox(t, p, newKey("paths"), "s", "r")
	out := mustExec(t, sb, compute.ExecRequest{Command: `env; pwd -P; readlink /proc/self/cwd; cat /proc/mounts; ` +
		`tr '\0' '\n' < /proc/self/environ; awk '{print $5}' /proc/self/mountinfo; echo "$TMPDIR"`})
	if strings.Contains(out, host) {
		t.Errorf("the host path %s is visible in the sandbox:\n%s", host, out)
	}
}

// markedPIDs are the live processes whose command line contains marker.
func markedPIDs(marker string) []string {
	var out []string
	for _, p := range computetest.Processes(marker) {
		out = append(out, strconv.Itoa(p.PID))
	}
	return out
}

// statusField is the values of a line of /proc/<pid>/status, e.g. the
// real, effective, saved and filesystem ids of "Uid:".
func statusField(pid, field string) []string {
	data, err := os.ReadFile(filepath.Join("/proc", pid, "status"))
	if err != nil {
		return nil
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field); ok {
			return strings.Fields(rest)
		}
	}
	return nil
}

func cmdline(pid string) string {
	data, _ := os.ReadFile(filepath.Join("/proc", pid, "cmdline"))
	return strings.TrimSpace(string(bytes.ReplaceAll(data, []byte{0}, []byte{' '})))
}
