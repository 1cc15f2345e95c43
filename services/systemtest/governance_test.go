package systemtest_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/services/engine/model"
	"github.com/xbot-runtime/xbot/services/engine/policy"
	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/stack"
)

// The end-to-end tests of governance (issue 4): policy, approvals with grant
// scopes, pause TTL, compaction, offload. Scheduling is in sched_test.go.

// deployRule sends every shell command starting with "echo deploy" for approval.
var deployRule = policy.Rule{ID: "deploy", Tool: "shell", Argument: "command", Pattern: `^echo deploy`,
	Action: policy.RequireApproval, Reason: "deploys need a person's approval"}

// deployer is an agent whose shell calls deploy, logging each execution to count.
func deployer(id, count string, commands ...string) profile.Profile {
	var turns []profile.Turn
	for _, c := range commands {
		turns = append(turns, profile.Turn{Text: "Deploying.", ToolCalls: call1("shell", fmt.Sprintf(`{"command":"echo %s >> %s"}`, c, count))})
	}
	turns = append(turns, profile.Turn{Text: "Done."})
	return profile.Profile{ID: id, Model: profile.ModelScripted, Tools: []string{"shell"},
		Policy: policy.Config{Rules: []policy.Rule{deployRule}}, Script: turns}
}

// decide submits an approval decision through the API.
func decide(t *testing.T, st *stack.Stack, runID, itemID, decision, scope, key string) map[string]any {
	t.Helper()
	code, body := call(t, st, "POST", "/v1/runs/"+runID+"/approval-decisions", token,
		map[string]any{"itemId": itemID, "decision": decision, "scope": scope, "reason": "checked by test"}, "Idempotency-Key", key)
	if code != 202 {
		t.Fatalf("decision: HTTP %d %v", code, body)
	}
	return body
}

// pendingApprovals lists the items of runID awaiting approval, via the API.
func pendingApprovals(t *testing.T, st *stack.Stack, runID string, want int) []string {
	t.Helper()
	var ids []string
	eventually.Succeeds(t, 10*time.Second, fmt.Sprintf("%d approvals pending", want), func() error {
		code, body := call(t, st, "GET", "/v1/approvals?status=pending&runId="+runID, token, nil)
		if code != 200 {
			return fmt.Errorf("HTTP %d %v", code, body)
		}
		ids = nil
		items, _ := body["approvals"].([]any)
		for _, a := range items {
			m := a.(map[string]any)
			if m["runId"] == runID {
				ids = append(ids, m["itemId"].(string))
			}
		}
		if len(ids) != want {
			return fmt.Errorf("%d pending: %v", len(ids), body)
		}
		return nil
	})
	slices.Sort(ids)
	return ids
}

// lines returns the lines of a file ("" when it does not exist).
func lines(t *testing.T, path string) []string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(raw))
}

// countType counts the run's events of one type.
func countType(t *testing.T, st *stack.Stack, runID, typ string) int {
	t.Helper()
	return typeCounts(t, listEvents(t, st, runID))[events.Type(typ)]
}

func lastToolResult(msgs []model.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == model.RoleTool {
			return msgs[i].Content
		}
	}
	return ""
}

func TestPolicyDenyIsReportedToTheModelWithoutAPause(t *testing.T) {
	t.Parallel()
	agent := profile.Profile{ID: "reckless", Model: profile.ModelScripted, Tools: []string{"shell"}, Script: []profile.Turn{
		{ToolCalls: call1("shell", `{"command":"rm -rf /"}`)},
		{Text: "I will not do that then."},
	}}
	e, st, reqs := agentEnv(t, agent)
	runID := create(t, st, "reckless", "clean up", "deny-1")["runId"].(string)
	waitStatus(t, st, runID, "completed", 10*time.Second)
	assertSequence(t, st, runID,
		"runtime.run.accepted", "runtime.capability.snapshot_frozen", "runtime.run.started",
		"runtime.item.started:assistant_message", "runtime.item.completed:assistant_message",
		"runtime.item.started:command_execution", "runtime.item.failed:command_execution",
		"runtime.item.started:assistant_message", "delta+", "runtime.item.completed:assistant_message",
		"runtime.run.completed")
	failed := itemEvents(t, st, runID, "runtime.item.failed")
	if failed[0]["errorCode"] != "blocked_by_policy" || failed[0]["ruleId"] != "default.rm-root" {
		t.Errorf("item failed %v, want blocked_by_policy", failed[0])
	}
	if got := lastToolResult(reqs.of("reckless")[1].Messages); !strings.Contains(got, "blocked_by_policy") {
		t.Errorf("the model got %q, want a blocked_by_policy result", got)
	}
	e.invariants(st)
}

func TestApprovalAllowRunsTheToolAndDenyTellsTheModel(t *testing.T) {
	t.Parallel()
	count := filepath.Join(t.TempDir(), "count")
	e, st, reqs := agentEnv(t, deployer("ops", count, "deploy"))
	for _, tc := range []struct{ decision, key string }{{"allow", "appr-allow"}, {"deny", "appr-deny"}} {
		runID := create(t, st, "ops", "ship it", tc.key)["runId"].(string)
		run := waitStatus(t, st, runID, "paused", 10*time.Second)
		if run["pauseReason"] != "awaiting_approval" {
			t.Fatalf("pauseReason %v", run["pauseReason"])
		}
		items := pendingApprovals(t, st, runID, 1)
		if got := lines(t, count); tc.decision == "allow" && len(got) != 0 {
			t.Fatalf("the tool ran before approval: %v", got)
		}
		res := decide(t, st, runID, items[0], tc.decision, "item", tc.key+"-d")
		if res["outcome"] != "applied" {
			t.Fatalf("decision outcome %v", res)
		}
		waitStatus(t, st, runID, "completed", 10*time.Second)
		final := "runtime.item.completed:command_execution"
		head := []string{"runtime.run.accepted", "runtime.capability.snapshot_frozen", "runtime.run.started",
			"runtime.item.started:assistant_message", "delta+", "runtime.item.completed:assistant_message",
			"runtime.item.started:command_execution", "runtime.item.awaiting_approval:command_execution", "runtime.run.paused",
			"runtime.approval.decision_submitted"}
		var mid []string
		if tc.decision == "deny" {
			mid = []string{"runtime.item.failed:command_execution", "runtime.command.applied", "runtime.run.resumed"}
		} else {
			mid = []string{"runtime.command.applied", "runtime.run.resumed", final}
		}
		assertSequence(t, st, runID, append(append(head, mid...),
			"runtime.item.started:assistant_message", "delta+", "runtime.item.completed:assistant_message",
			"runtime.run.completed")...)
	}
	if got := lines(t, count); !slices.Equal(got, []string{"deploy"}) {
		t.Errorf("the tool ran %v, want once (allowed), not for the denied run", got)
	}
	got := reqs.of("ops")
	if res := lastToolResult(got[len(got)-1].Messages); !strings.Contains(res, "denied_by_user") || !strings.Contains(res, "checked by test") {
		t.Errorf("after the deny the model got %q", res)
	}
	e.invariants(st)
}

func TestTwoApprovalsInOneResponseAreDecidedOneAtATime(t *testing.T) {
	t.Parallel()
	count := filepath.Join(t.TempDir(), "count")
	agent := profile.Profile{ID: "twin", Model: profile.ModelScripted, Tools: []string{"shell"},
		Policy: policy.Config{Rules: []policy.Rule{deployRule}}, Script: []profile.Turn{
			{ToolCalls: []profile.ScriptedCall{
				{Name: "shell", Arguments: fmt.Sprintf(`{"command":"echo deploy-a >> %s"}`, count)},
				{Name: "shell", Arguments: fmt.Sprintf(`{"command":"echo deploy-b >> %s"}`, count)},
			}},
			{Text: "Both done."},
		}}
	e, st, _ := agentEnv(t, agent)
	runID := create(t, st, "twin", "ship both", "twin-1")["runId"].(string)
	waitStatus(t, st, runID, "paused", 10*time.Second)
	items := pendingApprovals(t, st, runID, 2)

	if res := decide(t, st, runID, items[0], "allow", "item", "twin-d1"); res["outcome"] != "applied" {
		t.Fatalf("first decision %v", res)
	}
	// The same decision again: a duplicate; another key for the same item:
	// rejected. Neither runs anything.
	if res := decide(t, st, runID, items[0], "allow", "item", "twin-d1"); res["outcome"] != "duplicate" {
		t.Fatalf("repeated decision %v, want duplicate", res)
	}
	if res := decide(t, st, runID, items[0], "allow", "item", "twin-d1-again"); res["outcome"] != "rejected" || res["code"] != "approval_not_pending" {
		t.Fatalf("second decision for a decided item %v, want rejected approval_not_pending", res)
	}
	pendingApprovals(t, st, runID, 1)
	if run := waitStatus(t, st, runID, "paused", 5*time.Second); run["pauseReason"] != "awaiting_approval" {
		t.Fatalf("run %v, want still paused after one of two decisions", run)
	}
	if got := lines(t, count); len(got) != 0 {
		t.Fatalf("tools ran before the run resumed: %v", got)
	}
	if res := decide(t, st, runID, items[1], "allow", "item", "twin-d2"); res["outcome"] != "applied" {
		t.Fatalf("second decision %v", res)
	}
	waitStatus(t, st, runID, "completed", 10*time.Second)
	got := lines(t, count)
	slices.Sort(got)
	if !slices.Equal(got, []string{"deploy-a", "deploy-b"}) {
		t.Errorf("tools ran %v, want each once", got)
	}
	if n := countType(t, st, runID, "runtime.run.resumed"); n != 1 {
		t.Errorf("run resumed %d times, want once", n)
	}
	e.invariants(st)
}

func TestRunScopedGrantSkipsTheNextApproval(t *testing.T) {
	t.Parallel()
	count := filepath.Join(t.TempDir(), "count")
	e, st, _ := agentEnv(t, deployer("ops", count, "deploy-1", "deploy-2"))
	runID := create(t, st, "ops", "ship twice", "grant-run")["runId"].(string)
	waitStatus(t, st, runID, "paused", 10*time.Second)
	items := pendingApprovals(t, st, runID, 1)
	decide(t, st, runID, items[0], "allow", "run", "grant-run-d")
	waitStatus(t, st, runID, "completed", 10*time.Second)
	if got := lines(t, count); !slices.Equal(got, []string{"deploy-1", "deploy-2"}) {
		t.Errorf("tools ran %v", got)
	}
	if n := countType(t, st, runID, "runtime.run.paused"); n != 1 {
		t.Errorf("%d pauses, want one: the grant covers the second call", n)
	}
	grants := itemEvents(t, st, runID, "runtime.permission_grant.applied")
	if len(grants) != 1 || grants[0]["scope"] != "run" || grants[0]["ruleId"] != "deploy" || grants[0]["toolName"] != "shell" {
		t.Fatalf("grants %v", grants)
	}
	started := itemEvents(t, st, runID, "runtime.item.started")
	last := started[len(started)-2]["data"].(map[string]any) // the second shell call, before the final answer
	if last["grantId"] != grants[0]["grantId"] {
		t.Errorf("second call started with %v, want the grant %v recorded", last, grants[0]["grantId"])
	}
	e.invariants(st)
}

func TestSessionGrantIsHonouredByLaterRunsOfTheSession(t *testing.T) {
	t.Parallel()
	count := filepath.Join(t.TempDir(), "count")
	e, st, _ := agentEnv(t, deployer("ops", count, "deploy"))
	code, body := call(t, st, "POST", "/v1/runs", token, map[string]any{"agentId": "ops", "input": map[string]any{"content": "ship"},
		"platformSessionId": "sess-grant"}, "Idempotency-Key", "grant-sess")
	if code != 202 {
		t.Fatalf("create: HTTP %d %v", code, body)
	}
	first := body["runId"].(string)
	waitStatus(t, st, first, "paused", 10*time.Second)
	items := pendingApprovals(t, st, first, 1)
	decide(t, st, first, items[0], "allow", "platform_session", "grant-sess-d")
	waitStatus(t, st, first, "completed", 10*time.Second)
	code, body = call(t, st, "POST", "/v1/runs/"+first+"/inputs", token,
		map[string]any{"intent": "follow_up", "content": "ship again"}, "Idempotency-Key", "grant-sess-next")
	if code != 202 || body["createdRunId"] == nil {
		t.Fatalf("follow-up: HTTP %d %v", code, body)
	}
	next := body["createdRunId"].(string)
	waitStatus(t, st, next, "completed", 10*time.Second)
	if n := countType(t, st, next, "runtime.run.paused"); n != 0 {
		t.Errorf("the follow-up paused %d times; the session grant should cover it", n)
	}
	snap := itemEvents(t, st, next, "runtime.capability.snapshot_frozen")[0]["snapshot"].(map[string]any)
	grants, _ := snap["grants"].([]any)
	if len(grants) != 1 || grants[0].(map[string]any)["scope"] != "platform_session" {
		t.Errorf("the follow-up's snapshot grants %v, want the session grant", snap["grants"])
	}
	// A new run of the session (not a follow-up) gets the grant from the read model.
	code, body = call(t, st, "POST", "/v1/runs", token, map[string]any{"agentId": "ops", "input": map[string]any{"content": "ship once more"},
		"platformSessionId": "sess-grant"}, "Idempotency-Key", "grant-sess-new")
	if code != 202 {
		t.Fatalf("create in the session: HTTP %d %v", code, body)
	}
	third := body["runId"].(string)
	waitStatus(t, st, third, "completed", 10*time.Second)
	if n := countType(t, st, third, "runtime.run.paused"); n != 0 {
		t.Errorf("a new run of the session paused %d times; the session grant should cover it", n)
	}
	if got := lines(t, count); len(got) != 3 {
		t.Errorf("tools ran %v, want three times (once per run)", got)
	}
	e.invariants(st)
}

func TestApprovalDecidedAfterAnExecutorRestart(t *testing.T) {
	t.Parallel()
	count := filepath.Join(t.TempDir(), "count")
	e, front, executor := crashEnv(t, deployer("ops", count, "deploy"))
	exA := executor("exA", nil)
	runID := create(t, front, "ops", "ship", "restart-1")["runId"].(string)
	waitStatus(t, front, runID, "paused", 10*time.Second)
	items := pendingApprovals(t, front, runID, 1)
	exA.Executor.Kill()
	executor("exB", nil)
	// The new owner may take the partition over after the API stopped
	// waiting for the outcome: then the command's outcome is read later.
	res := decide(t, front, runID, items[0], "allow", "item", "restart-1-d")
	cmdID, _ := res["commandId"].(string)
	eventually.Succeeds(t, 30*time.Second, "the decision after the restart applied", func() error {
		if res["outcome"] == "applied" {
			return nil
		}
		_, res = call(t, front, "GET", "/v1/commands/"+cmdID, token, nil)
		return fmt.Errorf("outcome %v", res)
	})
	waitStatus(t, front, runID, "completed", 20*time.Second)
	if got := lines(t, count); !slices.Equal(got, []string{"deploy"}) {
		t.Errorf("tool ran %v, want once", got)
	}
	for _, p := range itemEvents(t, front, runID, "runtime.item.failed") {
		t.Errorf("an item failed after the restart: %v", p)
	}
	e.invariants(front)
}

func TestPausedRunExpiresAfterItsTTL(t *testing.T) {
	t.Parallel()
	count := filepath.Join(t.TempDir(), "count")
	agent := deployer("ops", count, "deploy")
	agent.PauseTTL = 500 * time.Millisecond
	e, st, _ := agentEnv(t, agent)
	runID := create(t, st, "ops", "ship", "ttl-1")["runId"].(string)
	run := waitStatus(t, st, runID, "expired", 10*time.Second)
	if run["status"] != "expired" {
		t.Fatalf("run %v", run)
	}
	failed := itemEvents(t, st, runID, "runtime.item.failed")
	if len(failed) != 1 || failed[0]["errorCode"] != "expired" {
		t.Errorf("items failed %v, want the approval closed as expired", failed)
	}
	pendingApprovals(t, st, runID, 0)
	if got := lines(t, count); len(got) != 0 {
		t.Errorf("the tool ran %v", got)
	}
	// A decision after the expiry changes nothing.
	var item string
	for _, ev := range listEvents(t, st, runID) {
		if ev["type"] == "runtime.item.awaiting_approval" {
			item = ev["itemId"].(string)
		}
	}
	if res := decide(t, st, runID, item, "allow", "item", "ttl-1-late"); res["outcome"] != "rejected" {
		t.Errorf("late decision %v, want rejected", res)
	}
	e.invariants(st)
}

func TestProfileEditedMidRunAffectsOnlyLaterRuns(t *testing.T) {
	t.Parallel()
	gate := filepath.Join(t.TempDir(), "gate")
	v1 := profile.Profile{ID: "writer", Model: profile.ModelScripted, Tools: []string{"shell"}, SystemPrompt: "You are version one.",
		Script: []profile.Turn{
			{ToolCalls: call1("shell", fmt.Sprintf(`{"command":"while [ ! -f %s ]; do sleep 0.02; done"}`, gate))},
			{Text: "Done."},
		}}
	e, st, reqs := agentEnv(t, v1)
	first := create(t, st, "writer", "write", "snap-1")["runId"].(string)
	waitItem(t, st, first, "command_execution")

	v2 := v1
	v2.SystemPrompt = "You are version two."
	cat, err := profile.NewCatalog(v2)
	if err != nil {
		t.Fatal(err)
	}
	st.Executor.SetProfiles(cat)
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, st, first, "completed", 10*time.Second)
	second := create(t, st, "writer", "write again", "snap-2")["runId"].(string)
	waitStatus(t, st, second, "completed", 10*time.Second)

	hash := func(runID string) string {
		frozen := itemEvents(t, st, runID, "runtime.capability.snapshot_frozen")
		if len(frozen) != 1 {
			t.Fatalf("run %s has %d snapshots, want exactly one", runID, len(frozen))
		}
		return frozen[0]["hash"].(string)
	}
	h1, h2 := hash(first), hash(second)
	if h1 == h2 {
		t.Errorf("both runs have snapshot %s; the second should have the edited profile's", h1)
	}
	if _, run := call(t, st, "GET", "/v1/runs/"+first, token, nil); run["snapshotHash"] != nil && run["snapshotHash"] != h1 {
		t.Errorf("read model snapshotHash %v, want %s", run["snapshotHash"], h1)
	}
	var prompts []string
	for _, r := range reqs.of("writer") {
		prompts = append(prompts, r.Messages[0].Content)
	}
	want := []string{"You are version one.", "You are version one.", "You are version two.", "You are version two."}
	if !slices.Equal(prompts, want) {
		t.Errorf("system prompts per model call %q, want %q: the first run keeps its snapshot after the edit", prompts, want)
	}
	e.invariants(st)
}

func TestRunUsageIsTotalledInTheReadModel(t *testing.T) {
	t.Parallel()
	agent := profile.Profile{ID: "counter", Model: profile.ModelScripted, Tools: []string{"shell"}, Script: []profile.Turn{
		{Text: "Counting.", ToolCalls: call1("shell", `{"command":"echo 1"}`)},
		{Text: "Counted to one."},
	}}
	e, st, _ := agentEnv(t, agent)
	runID := create(t, st, "counter", "count", "usage-1")["runId"].(string)
	waitStatus(t, st, runID, "completed", 10*time.Second)
	var prompt, completion, total float64
	calls := 0
	for _, p := range itemEvents(t, st, runID, "runtime.item.completed") {
		if p["itemType"] != "assistant_message" {
			continue
		}
		u := p["data"].(map[string]any)["usage"].(map[string]any)
		prompt, completion, total = prompt+u["promptTokens"].(float64), completion+u["completionTokens"].(float64), total+u["totalTokens"].(float64)
		calls++
	}
	_, run := call(t, st, "GET", "/v1/runs/"+runID, token, nil)
	u, _ := run["usage"].(map[string]any)
	if u == nil || u["modelCalls"] != float64(calls) || u["promptTokens"] != prompt || u["completionTokens"] != completion ||
		u["totalTokens"] != total || total == 0 {
		t.Errorf("usage %v, want %d calls, %v prompt, %v completion, %v total tokens (from the events)", u, calls, prompt, completion, total)
	}
	e.invariants(st)
}

// TestPauseExpiresOnTheNextOwner: the deadline comes from the log, so the
// executor that takes a paused run over expires it, though the one that
// paused it is gone.
func TestPauseExpiresOnTheNextOwner(t *testing.T) {
	t.Parallel()
	agent := deployer("ops", filepath.Join(t.TempDir(), "count"), "deploy")
	agent.PauseTTL = 3 * time.Second
	e, front, executor := crashEnv(t, agent)
	exA := executor("exA", nil)
	runID := create(t, front, "ops", "ship", "ttl-restart")["runId"].(string)
	waitStatus(t, front, runID, "paused", 10*time.Second)
	exA.Executor.Kill()
	executor("exB", nil)
	waitStatus(t, front, runID, "expired", 20*time.Second)
	e.invariants(front)
}
