package systemtest_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
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
	e := newEnv(t)
	cat, err := profile.NewCatalog(agents...)
	if err != nil {
		t.Fatal(err)
	}
	e.cat = cat
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

// items returns the run's items through the API.
func items(t *testing.T, st *stack.Stack, runID string) []map[string]any {
	t.Helper()
	code, body := call(t, st, "GET", "/v1/runs/"+runID+"/items?limit=100", token, nil)
	if code != 200 {
		t.Fatalf("items: HTTP %d %v", code, body)
	}
	var out []map[string]any
	for _, it := range body["items"].([]any) {
		out = append(out, it.(map[string]any))
	}
	return out
}

// toolItems are the run's items other than messages, in order.
func toolItems(t *testing.T, st *stack.Stack, runID string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, it := range items(t, st, runID) {
		if typ := it["type"]; typ != "assistant_message" && typ != "user_message" {
			out = append(out, it)
		}
	}
	return out
}

// wantLimit checks that item failed with limit_exceeded naming want, or —
// with rlimits only, when strict is false — that it ended at all.
func wantLimit(t *testing.T, bw *bwrap.Provider, it map[string]any, want string, strict bool) {
	t.Helper()
	cgroups := strings.HasPrefix(bw.Mechanism(), "cgroup")
	if !strict && !cgroups {
		if it["status"] != "completed" && it["status"] != "failed" {
			t.Errorf("item %v, want it ended", it)
		}
		return
	}
	msg, _ := it["errorMessage"].(string)
	if it["status"] != "failed" || it["errorCode"] != "limit_exceeded" || !strings.Contains(msg, want) {
		t.Errorf("item %v %v %q, want failed with limit_exceeded naming %q", it["status"], it["errorCode"], msg, want)
	}
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
	runID := create(t, st, "bomber", "bomb", "bomb-1")["runId"].(string)
	waitStatus(t, st, runID, "completed", time.Minute)
	t.Logf("fork bomb run completed in %v (tool timeout 5s); executor peak RSS %s before, %s after; limits: %s",
		time.Since(start), before, vmHWM(t), bw.Mechanism())
	its := toolItems(t, st, runID)
	if len(its) != 2 {
		t.Fatalf("tool items %v, want 2", its)
	}
	wantLimit(t, bw, its[0], "process limit of 64 reached", false)
	if its[1]["status"] != "completed" || !strings.Contains(fmt.Sprint(its[1]["output"]), "alive") {
		t.Errorf("the call after the fork bomb: %v", its[1])
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
	_, st, bw := limitEnv(t, "", capacity.Config{}, agent)
	runID := create(t, st, "hog", "hog", "hog-1")["runId"].(string)
	waitStatus(t, st, runID, "completed", time.Minute)
	its := toolItems(t, st, runID)
	if len(its) != 1 {
		t.Fatalf("tool items %v, want 1", its)
	}
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
	_, st, bw := limitEnv(t, "", capacity.Config{}, agent)
	runID := create(t, st, "filler", "fill", "fill-1")["runId"].(string)
	waitStatus(t, st, runID, "completed", time.Minute)
	its := toolItems(t, st, runID)
	if len(its) != 4 {
		t.Fatalf("tool items %v, want 4", its)
	}
	wantLimit(t, bw, its[0], "workspace limit of 4 MiB reached", true)
	wantLimit(t, bw, its[1], "workspace limit of 4 MiB reached", true)
	for _, it := range its[2:] {
		if it["status"] != "completed" {
			t.Errorf("item after cleaning up: %v", it)
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
	holdRun := create(t, st, "holder", "hold", "cap-hold")["runId"].(string)
	var workspace string // the holder's, on the host: <dir>/<tenant>/<workspace>/<agent>/<owner>/workspace
	eventually.Succeeds(t, 30*time.Second, "the holder's command runs", func() error {
		found, _ := filepath.Glob(filepath.Join(dir, "*", "*", "*", "*", "workspace", "held"))
		if len(found) != 1 {
			return fmt.Errorf("found %v", found)
		}
		workspace = filepath.Dir(found[0])
		return nil
	})
	second := create(t, st, "quick", "second", "cap-second")["runId"].(string)
	waitStatus(t, st, second, "completed", 30*time.Second)
	its := toolItems(t, st, second)
	msg, _ := its[0]["errorMessage"].(string)
	if len(its) != 1 || its[0]["status"] != "failed" || !strings.Contains(msg, "all 1 sandboxes this tenant may run at once are in use") {
		t.Errorf("the second run's tool call: %v, want it refused naming the tenant cap", its)
	}
	otherTenantRuns(t, st)
	if err := os.WriteFile(filepath.Join(workspace, "release"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, st, holdRun, "completed", 30*time.Second)
	third := create(t, st, "quick", "third", "cap-third")["runId"].(string)
	waitStatus(t, st, third, "completed", 30*time.Second)
	if its := toolItems(t, st, third); len(its) != 1 || its[0]["status"] != "completed" {
		t.Errorf("the tenant's run after the slot freed: %v", its)
	}
}

// otherTenantRuns checks that a run of another tenant gets its sandbox and
// completes its tool call.
func otherTenantRuns(t *testing.T, st *stack.Stack) {
	t.Helper()
	code, body := call(t, st, "POST", "/v1/runs", "tok-other", map[string]any{"agentId": "quick",
		"input": map[string]any{"content": "other"}}, "Idempotency-Key", "cap-other")
	if code != 202 {
		t.Fatalf("other tenant's create: HTTP %d %v", code, body)
	}
	other := body["runId"].(string)
	eventually.Succeeds(t, 30*time.Second, "the other tenant's run completes", func() error {
		code, run := call(t, st, "GET", "/v1/runs/"+other, "tok-other", nil)
		if code != 200 || run["status"] != "completed" {
			return fmt.Errorf("HTTP %d status %v", code, run["status"])
		}
		code, page := call(t, st, "GET", "/v1/runs/"+other+"/items", "tok-other", nil)
		if list, _ := page["items"].([]any); code != 200 || !strings.Contains(fmt.Sprint(list), "quick") {
			return fmt.Errorf("HTTP %d items %v: the tool call did not run", code, list)
		}
		return nil
	})
}
