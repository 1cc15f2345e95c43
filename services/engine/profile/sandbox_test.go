package profile_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/xbot-runtime/xbot/services/engine/compute"
	"github.com/xbot-runtime/xbot/services/engine/profile"
)

// TestSandboxLimitsLoadAndFreeze: the sandbox limits of agents.yaml reach
// the provider's Limits in bytes and are frozen into the run's snapshot.
func TestSandboxLimitsLoadAndFreeze(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "agents.yaml")
	yaml := "agents:\n  - id: lim\n    sandbox:\n      memoryMiB: 512\n      pids: 64\n      cpuMillis: 500\n      workspaceMiB: 2048\n"
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := profile.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := c.Get("lim")
	want := compute.Limits{MemoryBytes: 512 << 20, Pids: 64, CPUMillis: 500, WorkspaceBytes: 2048 << 20}
	if got := p.Sandbox.Limits(); got != want {
		t.Fatalf("Limits() = %+v, want %+v", got, want)
	}
	back, err := profile.SnapshotOf(frozenLog(t, p, nil))
	if err != nil {
		t.Fatal(err)
	}
	if got := back.Profile.Sandbox.Limits(); got != want {
		t.Errorf("frozen limits = %+v, want %+v", got, want)
	}
}

// TestSandboxLimitsRejected: negative limits and ones too small to start a
// shell are configuration errors.
func TestSandboxLimitsRejected(t *testing.T) {
	t.Parallel()
	for name, sb := range map[string]profile.Sandbox{
		"negative memory": {MemoryMiB: -1}, "tiny memory": {MemoryMiB: 8}, "negative pids": {Pids: -3},
		"two pids": {Pids: 2}, "tiny cpu": {CPUMillis: 5}, "overflowing workspace": {WorkspaceMiB: 1 << 50},
	} {
		p := profile.Profile{ID: "bad", Sandbox: sb}
		if err := p.Validate(); err == nil {
			t.Errorf("%s: Validate accepted %+v", name, sb)
		}
	}
	if err := (profile.Profile{ID: "ok", Sandbox: profile.Sandbox{MemoryMiB: 16, Pids: 8}}).Validate(); err != nil {
		t.Errorf("the smallest limits: %v", err)
	}
}
