package systemtest_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/services/api/client"
	"github.com/xbot-runtime/xbot/services/engine/compute"
	"github.com/xbot-runtime/xbot/services/engine/compute/computetest"
	"github.com/xbot-runtime/xbot/services/engine/compute/epp"
	"github.com/xbot-runtime/xbot/services/engine/compute/plugin"
	"github.com/xbot-runtime/xbot/services/engine/model"
	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/stack"
)

// The end-to-end tests of a compute provider plugin: the reference plugin
// (cmd/local-process), built and installed as a user installs it, runs the
// agents' shell tool through the EPP host.

// installedPlugin installs the reference plugin in a store of its own.
func installedPlugin(t *testing.T) *plugin.Installed {
	t.Helper()
	in, err := (&plugin.Store{Dir: t.TempDir()}).Install(t.Context(), plugin.Source{Dir: computetest.ReferencePlugin(t)},
		plugin.Options{Confirm: func(string) (bool, error) { return true, nil }})
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// pluginCompute is a provider running the installed plugin, as an executor
// process starts it.
func pluginCompute(t *testing.T, in *plugin.Installed, trace func(epp.TraceEvent)) compute.Provider {
	t.Helper()
	cfg := in.ProviderConfig(nil, plugin.Host{Name: "xbot", Version: "test"}, zap.NewNop())
	cfg.Trace = trace
	p, err := epp.New(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// pluginEnv is an env whose stack runs agents with the plugin's sandboxes.
func pluginEnv(t *testing.T, agents ...profile.Profile) (*env, *stack.Stack) {
	t.Helper()
	e := newEnv(t).withAgents(agents...)
	comp := pluginCompute(t, installedPlugin(t), nil)
	st := e.startWith("all", func(o *stack.Options) {
		o.Compute, o.Models = comp, (&requests{got: map[string][]model.Request{}}).resolver
	})
	return e, st
}

// pidsIn reads the pids a command wrote to dir's files.
func pidsIn(dir string, files ...string) ([]int, error) {
	var pids []int
	for _, f := range files {
		raw, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			return nil, err
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
		if err != nil {
			return nil, err
		}
		pids = append(pids, pid)
	}
	return pids, nil
}

// TestPluginShellToolAndCancel: a run's shell tool executes through the
// plugin, its sandbox id is recorded, and a cancel of a run whose tool
// sleeps kills the tool's processes: they are gone once the cancel's
// outcome is committed, within a bounded wait of 2 s.
func TestPluginShellToolAndCancel(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sleeper := fmt.Sprintf(`sleep 600 & echo $! > %[1]s/child.pid; echo $$ > %[1]s/parent.pid; wait`, dir)
	agent := profile.Profile{ID: "plugger", Model: profile.ModelScripted, Tools: []string{"shell"}, Script: []profile.Turn{
		{ToolCalls: call1("shell", `{"command":"echo through the plugin > note.txt; cat note.txt"}`)},
		{ToolCalls: call1("shell", fmt.Sprintf(`{"command":%q}`, sleeper))},
		{Text: "never reached"},
	}}
	e, st := pluginEnv(t, agent)
	runID := create(t, st, "plugger", "go", "plugin-cancel-1").RunID
	var pids []int
	eventually.Succeeds(t, 20*time.Second, "the sleeping tool's processes", func() (err error) {
		pids, err = pidsIn(dir, "parent.pid", "child.pid")
		return err
	})
	if res := cancelRun(t, st, runID, "stop", "plugin-cancel-1-c"); res.Outcome != client.OutcomeAccepted {
		t.Fatalf("cancel: %+v", res)
	}
	waitStatus(t, st, runID, "cancelled", 10*time.Second)
	eventually.Succeeds(t, 2*time.Second, "the tool's processes gone", func() error {
		for _, pid := range pids {
			if alive(pid) {
				return fmt.Errorf("pid %d is still running", pid)
			}
		}
		return nil
	})
	var ran []string
	for _, p := range payloads[events.ItemCompletedPayload](t, st, runID) {
		if p.ItemType == events.ItemCommandExecution {
			ran = append(ran, p.Content)
		}
	}
	if len(ran) != 1 || !strings.Contains(ran[0], "through the plugin") {
		t.Errorf("the first tool's result: %q", ran)
	}
	attached := payloads[events.SandboxAttachedPayload](t, st, runID)
	if len(attached) != 1 || attached[0].Provider != "local-process" || !strings.HasPrefix(attached[0].SandboxID, "lp-") {
		t.Errorf("runtime.sandbox.attached: %+v, want one of the plugin's sandbox", attached)
	}
	if failed := payloads[events.ItemFailedPayload](t, st, runID); len(failed) != 1 || failed[0].ErrorCode != events.ToolErrCancelled {
		t.Errorf("failed items %+v, want the sleeping tool cancelled", failed)
	}
	e.invariants(st)
}

// TestPluginCrashFailsTheReplyWithSandboxError: the plugin process dies
// while a tool runs; the tool and the reply fail with sandbox_error and the
// session's next message runs in a fresh sandbox.
func TestPluginCrashFailsTheReplyWithSandboxError(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	count, marker := filepath.Join(dir, "count"), fmt.Sprintf("600.%d", time.Now().UnixNano()%1e9)
	cmd := fmt.Sprintf(`n=$(cat %[1]s 2>/dev/null || echo 0); echo $((n+1)) > %[1]s; `+
		`if [ "$n" = 0 ]; then touch mark; echo $PPID > %[2]s/plugin.pid; exec sleep %[3]s; else test -e mark && echo old || echo fresh; fi`,
		count, dir, marker)
	agent := profile.Profile{ID: "worker", Model: profile.ModelScripted, Tools: []string{"shell"}, Script: []profile.Turn{
		{ToolCalls: call1("shell", fmt.Sprintf(`{"command":%q}`, cmd))},
		{Text: "done"},
	}}
	_, st := pluginEnv(t, agent)
	first := message(t, st, "sess-plugin-crash", "worker", "work", "pcrash-1")
	var pid []int
	eventually.Succeeds(t, 20*time.Second, "the tool running in the plugin", func() (err error) {
		pid, err = pidsIn(dir, "plugin.pid")
		return err
	})
	if err := syscall.Kill(pid[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	run := waitStatus(t, st, first.RunID, "failed", 20*time.Second)
	if run.ErrorCode != events.FailSandboxError {
		t.Errorf("the reply failed with %q, want sandbox_error", run.ErrorCode)
	}
	failed := payloads[events.ItemFailedPayload](t, st, first.RunID)
	if len(failed) != 1 || failed[0].ErrorCode != events.ToolErrSandboxError || !strings.Contains(failed[0].Message, "plugin process") {
		t.Errorf("failed items %+v, want the command failed with sandbox_error naming the plugin's end", failed)
	}
	next := message(t, st, "sess-plugin-crash", "", "again", "pcrash-2")
	waitStatus(t, st, next.RunID, "completed", 20*time.Second)
	var ran []string
	for _, p := range payloads[events.ItemCompletedPayload](t, st, next.RunID) {
		if p.ItemType == events.ItemCommandExecution {
			ran = append(ran, p.Content)
		}
	}
	if len(ran) != 1 || !strings.Contains(ran[0], "fresh") {
		t.Errorf("the next run's command: %q, want a fresh sandbox", ran)
	}
	before, after := payloads[events.SandboxAttachedPayload](t, st, first.RunID), payloads[events.SandboxAttachedPayload](t, st, next.RunID)
	if len(before) != 1 || len(after) != 1 || before[0].SandboxID == after[0].SandboxID {
		t.Errorf("sandboxes %+v then %+v, want two different ones", before, after)
	}
	for _, p := range computetest.Processes(marker) { // the dead plugin's orphan (see docs/providers.md)
		_ = syscall.Kill(p.PID, syscall.SIGKILL)
	}
}

// TestPluginSandboxSurvivesATakeover kills the executor while a tool runs in
// the plugin's sandbox; the new owner reconnects to the recorded sandbox
// (sandbox.connect with its id) and the run's next tool finds what the first
// left. When the sandbox is gone by then, the reply fails with
// sandbox_error instead of going on in another sandbox.
func TestPluginSandboxSurvivesATakeover(t *testing.T) {
	t.Parallel()
	for _, gone := range []bool{false, true} {
		t.Run(fmt.Sprintf("gone=%v", gone), func(t *testing.T) {
			t.Parallel()
			takeover(t, gone)
		})
	}
}

func takeover(t *testing.T, gone bool) {
	dir := t.TempDir()
	gate := filepath.Join(dir, "gate")
	t.Cleanup(func() { _ = os.WriteFile(gate, nil, 0o600) }) // let the dead executor's tool end
	agent := profile.Profile{ID: "mover", Model: profile.ModelScripted, Tools: []string{"shell"}, Script: []profile.Turn{
		{ToolCalls: call1("shell", fmt.Sprintf(`{"command":"touch mark; touch %s/started; while [ ! -f %s ]; do sleep 0.02; done"}`, dir, gate))},
		{ToolCalls: call1("shell", `{"command":"test -e mark && echo same sandbox || echo another sandbox"}`)},
		{Text: "done"},
	}}
	e := newEnv(t).withAgents(agent)
	in := installedPlugin(t)
	reqs := &requests{got: map[string][]model.Request{}}
	front := e.start("front", nil, stack.API, stack.ProjectorPostgres)
	executor := func(name string, comp compute.Provider) *stack.Stack {
		return e.startWith(name, func(o *stack.Options) {
			o.Components, o.Compute, o.Models = []stack.Component{stack.Executor}, comp, reqs.resolver
		})
	}
	exA := executor("exA", pluginCompute(t, in, nil))
	runID := create(t, front, "mover", "go", "takeover-1").RunID
	eventually.Succeeds(t, 20*time.Second, "the first tool running", func() error {
		_, err := os.Stat(filepath.Join(dir, "started"))
		return err
	})
	exA.Executor.Kill()
	id := attachedSandbox(t, front, runID)
	if gone { // the sandbox disappears from the plugin's keeping meanwhile
		if err := os.Remove(filepath.Join(in.Dir, plugin.DataDir, "sandboxes", "records", id+".json")); err != nil {
			t.Fatal(err)
		}
	}
	tr := &traced{}
	executor("exB", pluginCompute(t, in, tr.add))
	if gone {
		wantFailedLost(t, front, runID)
	} else {
		wantSameSandbox(t, front, runID)
	}
	if !tr.connected(id) {
		t.Errorf("the new owner did not ask the plugin for sandbox %s by its id", id)
	}
	e.invariants(front)
}

// attachedSandbox is the sandbox id the run recorded. The dead executor
// committed it before its tool ran; the API shows it once it read it (on a
// loaded machine, not at once).
func attachedSandbox(t *testing.T, front *stack.Stack, runID string) string {
	t.Helper()
	var attached []events.SandboxAttachedPayload
	eventually.Succeeds(t, 30*time.Second, "runtime.sandbox.attached of the first tool", func() error {
		if attached = payloads[events.SandboxAttachedPayload](t, front, runID); len(attached) != 1 {
			return fmt.Errorf("runtime.sandbox.attached: %+v", attached)
		}
		return nil
	})
	return attached[0].SandboxID
}

// wantFailedLost: the new owner's tool and the run failed with sandbox_error.
func wantFailedLost(t *testing.T, front *stack.Stack, runID string) {
	t.Helper()
	run := waitStatus(t, front, runID, "failed", 30*time.Second)
	failed := payloads[events.ItemFailedPayload](t, front, runID)
	if run.ErrorCode != events.FailSandboxError || len(failed) != 2 || failed[1].ErrorCode != events.ToolErrSandboxError {
		t.Errorf("run %q, failed items %+v; want the second tool and the run failed with sandbox_error", run.ErrorCode, failed)
	}
}

// wantSameSandbox: the new owner's tool found the first tool's mark, and
// the sandbox was attached once.
func wantSameSandbox(t *testing.T, front *stack.Stack, runID string) {
	t.Helper()
	waitStatus(t, front, runID, "completed", 30*time.Second)
	var ran []string
	for _, p := range payloads[events.ItemCompletedPayload](t, front, runID) {
		if p.ItemType == events.ItemCommandExecution {
			ran = append(ran, p.Content)
		}
	}
	if len(ran) != 1 || !strings.Contains(ran[0], "same sandbox") {
		t.Errorf("the new owner's tool: %q, want it in the same sandbox", ran)
	}
	if n := len(payloads[events.SandboxAttachedPayload](t, front, runID)); n != 1 {
		t.Errorf("%d runtime.sandbox.attached, want the first only", n)
	}
}

// traced keeps the requests an executor's provider sent.
type traced struct {
	mu   sync.Mutex
	sent []string
}

func (tr *traced) add(e epp.TraceEvent) {
	if e.Sent {
		tr.mu.Lock()
		tr.sent = append(tr.sent, string(e.Message))
		tr.mu.Unlock()
	}
}

// connected reports whether a sandbox.connect of id was sent.
func (tr *traced) connected(id string) bool {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	for _, m := range tr.sent {
		if strings.Contains(m, `"method":"sandbox.connect"`) && strings.Contains(m, `"sandbox_id":"`+id+`"`) {
			return true
		}
	}
	return false
}
