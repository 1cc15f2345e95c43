package systemtest_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/services/api/client/agentruntime"
	"github.com/xbot-runtime/xbot/services/engine/compute/computetest"
	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/stack"
)

// TestStep7SandboxDeletedMidReply is step 7 of the runtime client
// contract's verification: while a reply's command runs in its bwrap
// sandbox, the sandbox is deleted (its host directory removed, its
// processes killed). The reply ends failed with sandbox_error, its tool part
// says so, and the conversation's next input is answered by a reply whose
// commands run in a fresh sandbox of the same key.
func TestStep7SandboxDeletedMidReply(t *testing.T) {
	t.Parallel()
	marker, agent := keeperAgent()
	e := newEnv(t)
	st, dir := bwrapAgentEnv(t, e, func(*stack.Options) {}, agent)
	startStreams(t, e, st)
	c := newConv(t, runtimeClient(t, st, "sess-step7", "keeper"), nil)
	c.submit("step7-1", "work")
	ws := deleteSandboxMidCommand(t, dir, marker)
	end := c.idle()
	if end.Outcome != agentruntime.OutcomeFailed || end.Error == nil || end.Error.Code != events.FailSandboxError {
		t.Fatalf("the reply whose sandbox was deleted ended %+v, want failed sandbox_error", end)
	}
	if errs := toolErrors(c.got); len(errs) != 1 || !strings.HasPrefix(errs[0], events.ToolErrSandboxError) {
		t.Errorf("the command's part failed with %q, want sandbox_error", errs)
	}
	before := len(c.got)
	c.submit("step7-2", "again")
	c.until("the next input's reply", startedFor("step7-2"))
	waitSleeping(t, marker)
	killAll(marker) // the command ends (killed), not the sandbox
	if end := c.idle(); end.Outcome != agentruntime.OutcomeCompleted {
		t.Fatalf("the next reply ended %+v, want completed", end)
	}
	// Its first command found no mark; its second was the one killed.
	if outs := toolOutputs(c.got[before:]); len(outs) != 2 || !strings.Contains(outs[0], "fresh") {
		t.Errorf("the next reply's first command printed %q, want it in a fresh sandbox", outs)
	}
	if again := workspaceOf(t, dir, "keeper"); again != ws {
		t.Errorf("the fresh sandbox is at %s, want the key's own place %s", again, ws)
	}
}

// keeperAgent is an agent whose replies look for the mark their sandbox would
// hold from before, mark it, then run a command that lasts until the test
// ends it (its command line holds marker).
func keeperAgent() (marker string, p profile.Profile) {
	marker = fmt.Sprintf("700.%d", time.Now().UnixNano()%1e9)
	return marker, profile.Profile{ID: "keeper", Model: profile.ModelScripted, Tools: []string{"shell"}, Policy: noPolicy,
		Script: []profile.Turn{
			{ToolCalls: call1("shell", `{"command":"test -e mark && echo old || echo fresh; touch mark"}`)},
			{ToolCalls: call1("shell", fmt.Sprintf(`{"command":"exec sleep %s"}`, marker))},
			{Text: "done"},
		}}
}

// deleteSandboxMidCommand deletes keeper's sandbox below dir while its
// command runs: its host directory removed, its processes killed. It
// returns the workspace's path.
func deleteSandboxMidCommand(t *testing.T, dir, marker string) string {
	t.Helper()
	waitSleeping(t, marker)
	ws := workspaceOf(t, dir, "keeper")
	if err := os.RemoveAll(filepath.Dir(ws)); err != nil {
		t.Fatal(err)
	}
	killAll(marker)
	return ws
}

// waitSleeping waits for the command that sleeps with marker.
func waitSleeping(t *testing.T, marker string) {
	t.Helper()
	eventually.Holds(t, convWait, "the command running", func() bool {
		for _, p := range computetest.Processes(marker) {
			if strings.HasPrefix(p.Cmdline, "sleep ") {
				return true
			}
		}
		return false
	})
}

// killAll kills the processes whose command line holds marker.
func killAll(marker string) {
	for _, p := range computetest.Processes(marker) {
		_ = syscall.Kill(p.PID, syscall.SIGKILL)
	}
}

// toolErrors are the error texts of the tool parts that failed in evs.
func toolErrors(evs []agentruntime.Event) []string {
	var out []string
	for _, ev := range evs {
		if ch, ok := frameOf(ev); ok && ch.Type == "tool-output-error" {
			out = append(out, ch.ErrorText)
		}
	}
	return out
}
