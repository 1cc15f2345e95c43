package local_test

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/xbot-runtime/xbot/services/engine/compute"
	"github.com/xbot-runtime/xbot/services/engine/compute/local"
)

// TestCommandRunsInItsCgroupWhichTheNextSandboxReuses: the first thing a
// command does already happens inside the sandbox's cgroup (memory and
// pids), and the sandbox's group holds the default limits. Once the command
// ended and the handle closed, the group holds no process, and the next
// handle with the same limits runs its commands in it (its memory charge
// read and its CPU quota written again on the way); closing the provider
// removes it.
func TestCommandRunsInItsCgroupWhichTheNextSandboxReuses(t *testing.T) {
	t.Parallel()
	p, err := local.New(local.Config{Dir: t.TempDir(), Logger: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(p.Mechanism(), "cgroup v1") {
		if os.Getuid() == 0 {
			t.Fatalf("as root on this host cgroup v1 is expected, got %s", p.Mechanism())
		}
		t.Skipf("no cgroup here (%s)", p.Mechanism())
	}
	// groups runs a command in a new handle of owner's key and returns
	// the box group it ran in, by controller, and the handle.
	groups := func(owner string) (map[string]string, compute.Sandbox) {
		t.Helper()
		sb, err := p.Open(t.Context(), compute.Spec{Key: compute.Key{TenantID: "t", WorkspaceID: "w", AgentID: "a",
			OwnerID: owner}, SessionID: "s", RunID: "r"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = sb.Close() })
		var out bytes.Buffer
		if _, err := sb.Exec(t.Context(), compute.ExecRequest{Command: "cat /proc/self/cgroup", Stdout: &out}); err != nil {
			t.Fatal(err)
		}
		dirs := map[string]string{} // controller → the sandbox's group
		for _, line := range strings.Split(out.String(), "\n") {
			parts := strings.SplitN(line, ":", 3)
			if len(parts) == 3 && (parts[1] == "memory" || parts[1] == "pids" || parts[1] == "cpu") {
				if !strings.Contains(parts[2], ".cmd") || !strings.Contains(parts[2], ".box") {
					t.Errorf("the command's %s cgroup is %s, not the sandbox's", parts[1], parts[2])
				}
				dirs[parts[1]] = filepath.Join("/sys/fs/cgroup", parts[1], filepath.Dir(parts[2]))
			}
		}
		if len(dirs) != 3 {
			t.Fatalf("cgroups of the command: %q", out.String())
		}
		return dirs, sb
	}
	dirs, sb := groups("o")
	// The defaults: 1 GiB of memory, 256 processes, one core (100 ms per 100 ms).
	for file, want := range map[string]string{filepath.Join(dirs["memory"], "memory.limit_in_bytes"): "1073741824",
		filepath.Join(dirs["pids"], "pids.max"): "256", filepath.Join(dirs["cpu"], "cpu.cfs_quota_us"): "100000"} {
		if got, err := os.ReadFile(file); err != nil || strings.TrimSpace(string(got)) != want {
			t.Errorf("%s = %q, %v; want %s", file, got, err, want)
		}
	}
	if err := sb.Close(); err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		procs, _ := filepath.Glob(filepath.Join(d, "*", "cgroup.procs"))
		for _, f := range append(procs, filepath.Join(d, "cgroup.procs")) {
			if got, err := os.ReadFile(f); err != nil || len(bytes.TrimSpace(got)) > 0 {
				t.Errorf("%s after Close: %q, %v; want no process", f, got, err)
			}
		}
	}
	next, sb := groups("another")
	if !maps.Equal(next, dirs) {
		t.Errorf("the next sandbox's command ran in %v, want the closed one's group %v", next, dirs)
	}
	if err := sb.Close(); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	for _, d := range next {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("the sandbox's cgroup %s remains after the provider closed: %v", d, err)
		}
	}
}
