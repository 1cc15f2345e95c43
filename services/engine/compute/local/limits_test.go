package local_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/xbot-runtime/xbot/services/engine/compute"
	"github.com/xbot-runtime/xbot/services/engine/compute/local"
)

// TestCommandRunsInItsCgroupWhichCloseRemoves: the first thing a command
// does already happens inside the sandbox's cgroup (memory and pids), and
// the sandbox's group holds the default limits; the groups are gone once the command ended and the handle closed.
func TestCommandRunsInItsCgroupWhichCloseRemoves(t *testing.T) {
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
	sb, err := p.Open(t.Context(), compute.Spec{Key: compute.Key{TenantID: "t", WorkspaceID: "w", AgentID: "a", OwnerID: "o"},
		SessionID: "s", RunID: "r"})
	if err != nil {
		t.Fatal(err)
	}
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
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("the sandbox's cgroup %s remains after Close: %v", d, err)
		}
	}
}
