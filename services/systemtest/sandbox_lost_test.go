package systemtest_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/services/engine/compute/computetest"
	"github.com/xbot-runtime/xbot/services/engine/profile"
)

// TestSandboxDeletedMidReplyFailsItWithSandboxError deletes a run's
// sandbox (its host directory removed, its processes killed) while a tool
// of the reply runs: the tool's item and the run fail with sandbox_error,
// and the session's next message runs in a fresh sandbox of the same key.
func TestSandboxDeletedMidReplyFailsItWithSandboxError(t *testing.T) {
	t.Parallel()
	dir, state := t.TempDir(), t.TempDir()
	marker := fmt.Sprintf("600.%d", time.Now().UnixNano()%1e9)
	count := filepath.Join(state, "count")
	// The first call marks the workspace and waits; the next one (in the
	// next run) reports whether it finds the mark. The local provider runs
	// commands on host paths, so the count outside the sandbox is visible.
	cmd := fmt.Sprintf(`n=$(cat %[1]s 2>/dev/null || echo 0); echo $((n+1)) > %[1]s; `+
		`if [ "$n" = 0 ]; then touch mark; exec sleep %[2]s; else test -e mark && echo old || echo fresh; fi`, count, marker)
	agent := profile.Profile{ID: "worker", Model: profile.ModelScripted, Tools: []string{"shell"}, Script: []profile.Turn{
		{ToolCalls: call1("shell", fmt.Sprintf(`{"command":%q}`, cmd))},
		{Text: "done"},
	}}
	_, st, _ := agentEnvIn(t, dir, agent)
	first := message(t, st, "sess-lost", "worker", "work", "lost-1")
	wantRouted(t, first, "follow_up")
	eventually.Succeeds(t, 20*time.Second, "the tool is running", func() error {
		for _, p := range computetest.Processes(marker) {
			if strings.HasPrefix(p.Cmdline, "sleep ") {
				return nil
			}
		}
		return context.DeadlineExceeded // the shell has not marked the workspace yet
	})
	workspaces, err := filepath.Glob(filepath.Join(dir, "*", "*", "*", "*", "workspace"))
	if err != nil || len(workspaces) != 1 {
		t.Fatalf("the key's sandbox directory: %v %v", workspaces, err)
	}
	if err := os.RemoveAll(filepath.Dir(workspaces[0])); err != nil {
		t.Fatal(err)
	}
	for _, p := range computetest.Processes(marker) {
		_ = syscall.Kill(p.PID, syscall.SIGKILL)
	}
	run := waitStatus(t, st, first.RunID, "failed", 20*time.Second)
	if run.ErrorCode != events.FailSandboxError {
		t.Errorf("the reply failed with %q, want sandbox_error", run.ErrorCode)
	}
	failed := payloads[events.ItemFailedPayload](t, st, first.RunID)
	if len(failed) != 1 || failed[0].ErrorCode != events.ToolErrSandboxError || failed[0].ItemType != events.ItemCommandExecution {
		t.Errorf("failed items %+v, want the command failed with sandbox_error", failed)
	}
	next := message(t, st, "sess-lost", "", "again", "lost-2")
	wantRouted(t, next, "follow_up")
	waitStatus(t, st, next.RunID, "completed", 20*time.Second)
	var ran []string
	for _, p := range payloads[events.ItemCompletedPayload](t, st, next.RunID) {
		if p.ItemType == events.ItemCommandExecution {
			ran = append(ran, p.Content)
		}
	}
	if len(ran) != 1 || !strings.Contains(ran[0], "fresh") {
		t.Errorf("the next run's command: %q, want it to run in a fresh sandbox", ran)
	}
}
