package computetest_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/services/engine/compute/computetest"
)

func TestDirParentIsSearchOnlyForOthers(t *testing.T) {
	t.Parallel()
	dir := computetest.Dir(t)
	info, err := os.Stat(filepath.Dir(dir))
	if err != nil {
		t.Fatal(err)
	}
	if perm := info.Mode().Perm(); perm&0o011 != 0o011 || perm&0o066 != 0 {
		t.Errorf("parent of %s has mode %o, want search for group and others and nothing more", dir, perm)
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
		t.Errorf("Dir is not a fresh directory: %v, %v", entries, err)
	}
}

func TestProcessesFindsAMarkedProcess(t *testing.T) {
	t.Parallel()
	marker := "600." + strconv.FormatInt(time.Now().UnixNano(), 10)
	cmd := exec.Command("sleep", marker)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	got := computetest.Processes(marker)
	if len(got) != 1 || got[0].PID != cmd.Process.Pid || got[0].Cmdline != "sleep "+marker {
		t.Fatalf("Processes(%s) = %v, want the sleep with pid %d", marker, got, cmd.Process.Pid)
	}
	if none := computetest.Processes(marker + ".none"); len(none) != 0 {
		t.Errorf("an unused marker matched %v", none)
	}
}
