package systemtest_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/services/api/client"
	"github.com/xbot-runtime/xbot/services/engine/compute/bwrap"
	"github.com/xbot-runtime/xbot/services/engine/compute/capacity"
	"github.com/xbot-runtime/xbot/services/engine/compute/computetest"
	"github.com/xbot-runtime/xbot/services/engine/model"
	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/stack"
)

// The end-to-end tests of sandbox resource limits: scripted agents whose
// tool calls hit a limit on the bwrap provider, and the caps on running
// sandboxes. With cgroups (root here, as on CI) the item names the limit;
// with rlimits only (an unprivileged executor) the command must be
// contained and the run go on.

// limitEnv starts a stack running agents on a bwrap provider capped by cfg,
// its sandboxes below dir ("" = a temporary directory).
func limitEnv(t *testing.T, dir string, cfg capacity.Config, agents ...profile.Profile) (*env, *stack.Stack, *bwrap.Provider) {
	t.Helper()
	if dir == "" {
		dir = computetest.Dir(t)
	}
	e := newEnv(t).withAgents(agents...)
	bw, err := bwrap.New(bwrap.Config{Dir: dir, Logger: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatalf("bwrap (required by these tests): %v", err)
	}
	cfg.Provider = bw
	capped, err := capacity.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	reqs := &requests{got: map[string][]model.Request{}}
	st := e.startWith("all", func(o *stack.Options) { o.Compute, o.Models = capped, reqs.resolver })
	return e, st, bw
}

// limitedRun runs agent to completion on a bwrap stack of its own and
// returns the provider and the run's tool items, which must be n.
func limitedRun(t *testing.T, agent profile.Profile, n int) (*bwrap.Provider, []client.Item) {
	t.Helper()
	_, st, bw := limitEnv(t, "", capacity.Config{}, agent)
	runID := runUntil(t, st, agent.ID, "go", agent.ID+"-1", "completed", time.Minute)
	its := toolItems(t, st, runID)
	if len(its) != n {
		t.Fatalf("tool items %+v, want %d", its, n)
	}
	return bw, its
}

// toolItems are the run's items other than messages, in order, as acme
// reads them through the API.
func toolItems(t *testing.T, st *stack.Stack, runID string) []client.Item {
	t.Helper()
	return toolItemsOf(t, apiOf(t, st), runID)
}

// toolItemsOf is toolItems through c.
func toolItemsOf(t *testing.T, c *client.Client, runID string) []client.Item {
	t.Helper()
	all, err := c.AllItems(t.Context(), runID, client.Page{})
	if err != nil {
		t.Fatalf("items of %s: %v", runID, err)
	}
	var out []client.Item
	for _, it := range all {
		if typ := events.ItemType(it.Type); typ != events.ItemAssistantMessage && typ != events.ItemUserMessage {
			out = append(out, it)
		}
	}
	return out
}

// wantLimit checks that item failed with limit_exceeded naming want, or —
// with rlimits only, when strict is false — that it ended at all.
func wantLimit(t *testing.T, bw *bwrap.Provider, it client.Item, want string, strict bool) {
	t.Helper()
	cgroups := strings.HasPrefix(bw.Mechanism(), "cgroup")
	if !strict && !cgroups {
		if it.Status != "completed" && it.Status != "failed" {
			t.Errorf("item %+v, want it ended", it)
		}
		return
	}
	if it.Status != "failed" || it.ErrorCode != events.ToolErrLimitExceeded || !strings.Contains(it.ErrorMessage, want) {
		t.Errorf("item %s %s %q, want failed with limit_exceeded naming %q", it.Status, it.ErrorCode, it.ErrorMessage, want)
	}
}

// outputOf is a closed item's output ("" when it has none).
func outputOf(it client.Item) string {
	if it.Output == nil {
		return ""
	}
	return *it.Output
}

func shellCall(cmd string, timeoutSeconds int) []profile.ScriptedCall {
	return call1("shell", fmt.Sprintf(`{"command":%q,"timeoutSeconds":%d}`, cmd, timeoutSeconds))
}

// vmHWM is this process's peak resident memory in KiB (/proc/self/status).
func vmHWM(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "?"
}

// TestResourcesForkBombIsContained: a fork bomb under the profile's pids
// limit fails its item with the limit named, leaves the sandbox usable for
// the next call, and the run completes.
func TestResourcesForkBombIsContained(t *testing.T) {
	t.Parallel()
	agent := profile.Profile{ID: "bomber", Model: profile.ModelScripted, Tools: []string{"shell"},
		Sandbox: profile.Sandbox{Pids: 64}, Script: []profile.Turn{
			{ToolCalls: shellCall("f(){ f & f & }; f; sleep 30", 5)},
			{ToolCalls: shellCall("echo alive", 10)},
			{Text: "done"},
		}}
	_, st, bw := limitEnv(t, "", capacity.Config{}, agent)
	before := vmHWM(t)
	start := time.Now()
	runID := runUntil(t, st, "bomber", "bomb", "bomb-1", "completed", time.Minute)
	t.Logf("fork bomb run completed in %v (tool timeout 5s); executor peak RSS %s before, %s after; limits: %s",
		time.Since(start), before, vmHWM(t), bw.Mechanism())
	its := toolItems(t, st, runID)
	if len(its) != 2 {
		t.Fatalf("tool items %+v, want 2", its)
	}
	wantLimit(t, bw, its[0], "process limit of 64 reached", false)
	if its[1].Status != "completed" || !strings.Contains(outputOf(its[1]), "alive") {
		t.Errorf("the call after the fork bomb: %+v", its[1])
	}
}

// TestResourcesMemoryHogIsKilled: a command allocating past the profile's
// memory limit is killed with the limit named; the run goes on.
func TestResourcesMemoryHogIsKilled(t *testing.T) {
	t.Parallel()
	agent := profile.Profile{ID: "hog", Model: profile.ModelScripted, Tools: []string{"shell"},
		Sandbox: profile.Sandbox{MemoryMiB: 64}, Script: []profile.Turn{
			{ToolCalls: shellCall("head -c 536870912 /dev/zero | tail > /dev/null", 60)},
			{Text: "done"},
		}}
	bw, its := limitedRun(t, agent, 1)
	wantLimit(t, bw, its[0], "memory limit of 64 MiB reached", false)
}

// TestResourcesWorkspaceQuota: a command that fills the workspace past the
// profile's limit fails with it named, a write_file is then refused too,
// and after the file is removed writing works again.
func TestResourcesWorkspaceQuota(t *testing.T) {
	t.Parallel()
	agent := profile.Profile{ID: "filler", Model: profile.ModelScripted, Tools: []string{"shell", "write_file"},
		Sandbox: profile.Sandbox{WorkspaceMiB: 4}, Script: []profile.Turn{
			{ToolCalls: shellCall("head -c 8388608 /dev/zero > big.bin", 60)},
			{ToolCalls: call1("write_file", `{"path":"note.txt","content":"hello"}`)},
			{ToolCalls: shellCall("rm big.bin", 10)},
			{ToolCalls: call1("write_file", `{"path":"note.txt","content":"hello"}`)},
			{Text: "done"},
		}}
	bw, its := limitedRun(t, agent, 4)
	wantLimit(t, bw, its[0], "workspace limit of 4 MiB reached", true)
	wantLimit(t, bw, its[1], "workspace limit of 4 MiB reached", true)
	for _, it := range its[2:] {
		if it.Status != "completed" {
			t.Errorf("item after cleaning up: %+v", it)
		}
	}
}

// TestResourcesTenantCap: with one sandbox per tenant, a second run of the
// tenant waits for the slot and, the wait over, its tool call fails with the
// cap named; another tenant is not held up; once the first run ended the
// tenant's next run gets a sandbox.
func TestResourcesTenantCap(t *testing.T) {
	t.Parallel()
	dir := computetest.Dir(t)
	hold := "touch held; while [ ! -f release ]; do sleep 0.05; done"
	holder := profile.Profile{ID: "holder", Model: profile.ModelScripted, Tools: []string{"shell"},
		Sandbox: profile.Sandbox{}, Script: []profile.Turn{{ToolCalls: shellCall(hold, 120)}, {Text: "done"}}}
	quick := profile.Profile{ID: "quick", Model: profile.ModelScripted, Tools: []string{"shell"},
		Script: []profile.Turn{{ToolCalls: shellCall("echo quick", 10)}, {Text: "done"}}}
	_, st, _ := limitEnv(t, dir, capacity.Config{PerTenant: 1, Wait: 300 * time.Millisecond}, holder, quick)
	holdRun := create(t, st, "holder", "hold", "cap-hold").RunID
	var workspace string // the holder's, on the host: <dir>/<tenant>/<workspace>/<agent>/<owner>/workspace
	eventually.Succeeds(t, 30*time.Second, "the holder's command runs", func() error {
		found, _ := filepath.Glob(filepath.Join(dir, "*", "*", "*", "*", "workspace", "held"))
		if len(found) != 1 {
			return fmt.Errorf("found %v", found)
		}
		workspace = filepath.Dir(found[0])
		return nil
	})
	second := runUntil(t, st, "quick", "second", "cap-second", "completed", 30*time.Second)
	its := toolItems(t, st, second)
	if len(its) != 1 || its[0].Status != "failed" || !strings.Contains(its[0].ErrorMessage, "all 1 sandboxes this tenant may run at once are in use") {
		t.Errorf("the second run's tool call: %+v, want it refused naming the tenant cap", its)
	}
	otherTenantRuns(t, st)
	if err := os.WriteFile(filepath.Join(workspace, "release"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, st, holdRun, "completed", 30*time.Second)
	third := runUntil(t, st, "quick", "third", "cap-third", "completed", 30*time.Second)
	if its := toolItems(t, st, third); len(its) != 1 || its[0].Status != "completed" {
		t.Errorf("the tenant's run after the slot freed: %+v", its)
	}
}

// otherTenantRuns checks that a run of another tenant gets its sandbox and
// completes its tool call.
func otherTenantRuns(t *testing.T, st *stack.Stack) {
	t.Helper()
	c := apiClient(t, st, otherToken, nil)
	other := createRun(t, c, client.CreateRunRequest{AgentID: "quick", Input: client.UserInput{Content: "other"}}, "cap-other").RunID
	waitStatusOf(t, c, other, "completed", 30*time.Second)
	if its := toolItemsOf(t, c, other); len(its) != 1 || its[0].Status != "completed" || !strings.Contains(outputOf(its[0]), "quick") {
		t.Errorf("the other tenant's tool call: %+v, want it completed, printing quick", its)
	}
}
