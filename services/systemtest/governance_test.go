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
	"github.com/xbot-runtime/xbot/services/api/client"
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

// decide submits an approval decision through the API as acme; an error
// answer fails the test.
func decide(t *testing.T, st *stack.Stack, runID, itemID, decision, scope, key string) client.CommandResult {
	t.Helper()
	res, err := apiOf(t, st).DecideApproval(t.Context(), runID,
		client.ApprovalDecisionRequest{ItemID: itemID, Decision: decision, Scope: scope, Reason: "checked by test"},
		client.CommandOptions{IdempotencyKey: key})
	if refused(err) != nil {
		t.Fatalf("decision: %v", err)
	}
	return res
}

// pendingApprovals lists the items of runID awaiting approval, via the API.
func pendingApprovals(t *testing.T, st *stack.Stack, runID string, want int) []string {
	t.Helper()
	var ids []string
	eventually.Succeeds(t, 10*time.Second, fmt.Sprintf("%d approvals pending", want), func() error {
		pending, err := apiOf(t, st).AllApprovals(t.Context(), client.ApprovalQuery{Status: client.ApprovalPending, RunID: runID})
		if err != nil {
			return err
		}
		ids = nil
		for _, a := range pending {
			if a.RunID == runID {
				ids = append(ids, a.ItemID)
			}
		}
		if len(ids) != want {
			return fmt.Errorf("%d pending: %+v", len(ids), pending)
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
	runID := runUntil(t, st, "reckless", "clean up", "deny-1", "completed", 10*time.Second)
	assertLog(t, st, runID,
		"runtime.item.started:assistant_message", "runtime.item.completed:assistant_message",
		"runtime.item.started:command_execution", "runtime.item.failed:command_execution",
		"runtime.item.started:assistant_message", "delta+", "runtime.item.completed:assistant_message",
		"runtime.run.completed")
	failed := payloads[events.ItemFailedPayload](t, st, runID)
	if failed[0].ErrorCode != events.ToolErrBlockedByPolicy || failed[0].RuleID != "default.rm-root" {
		t.Errorf("item failed %+v, want blocked_by_policy", failed[0])
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
		runID := create(t, st, "ops", "ship it", tc.key).RunID
		run := waitStatus(t, st, runID, "paused", 10*time.Second)
		if run.PauseReason != string(events.PauseAwaitingApproval) {
			t.Fatalf("pauseReason %q", run.PauseReason)
		}
		items := pendingApprovals(t, st, runID, 1)
		if got := lines(t, count); tc.decision == "allow" && len(got) != 0 {
			t.Fatalf("the tool ran before approval: %v", got)
		}
		if res := decide(t, st, runID, items[0], tc.decision, "item", tc.key+"-d"); res.Outcome != client.OutcomeApplied {
			t.Fatalf("decision outcome %+v", res)
		}
		waitStatus(t, st, runID, "completed", 10*time.Second)
		final := "runtime.item.completed:command_execution"
		head := []string{"runtime.item.started:assistant_message", "delta+", "runtime.item.completed:assistant_message",
			"runtime.item.started:command_execution", "runtime.item.awaiting_approval:command_execution", "runtime.run.paused",
			"runtime.approval.decision_submitted"}
		var mid []string
		if tc.decision == "deny" {
			mid = []string{"runtime.item.failed:command_execution", "runtime.command.applied", "runtime.run.resumed"}
		} else {
			mid = []string{"runtime.command.applied", "runtime.run.resumed", final}
		}
		assertLog(t, st, runID, append(append(head, mid...),
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
	runID := runUntil(t, st, "twin", "ship both", "twin-1", "paused", 10*time.Second)
	items := pendingApprovals(t, st, runID, 2)

	if res := decide(t, st, runID, items[0], "allow", "item", "twin-d1"); res.Outcome != client.OutcomeApplied {
		t.Fatalf("first decision %+v", res)
	}
	// The same decision again: a duplicate; another key for the same item:
	// rejected. Neither runs anything.
	if res := decide(t, st, runID, items[0], "allow", "item", "twin-d1"); res.Outcome != client.OutcomeDuplicate {
		t.Fatalf("repeated decision %+v, want duplicate", res)
	}
	if res := decide(t, st, runID, items[0], "allow", "item", "twin-d1-again"); res.Outcome != client.OutcomeRejected || res.Code != "approval_not_pending" {
		t.Fatalf("second decision for a decided item %+v, want rejected approval_not_pending", res)
	}
	pendingApprovals(t, st, runID, 1)
	if run := waitStatus(t, st, runID, "paused", 5*time.Second); run.PauseReason != string(events.PauseAwaitingApproval) {
		t.Fatalf("run %+v, want still paused after one of two decisions", run)
	}
	if got := lines(t, count); len(got) != 0 {
		t.Fatalf("tools ran before the run resumed: %v", got)
	}
	if res := decide(t, st, runID, items[1], "allow", "item", "twin-d2"); res.Outcome != client.OutcomeApplied {
		t.Fatalf("second decision %+v", res)
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
	runID := runUntil(t, st, "ops", "ship twice", "grant-run", "paused", 10*time.Second)
	items := pendingApprovals(t, st, runID, 1)
	decide(t, st, runID, items[0], "allow", "run", "grant-run-d")
	waitStatus(t, st, runID, "completed", 10*time.Second)
	if got := lines(t, count); !slices.Equal(got, []string{"deploy-1", "deploy-2"}) {
		t.Errorf("tools ran %v", got)
	}
	if n := countType(t, st, runID, "runtime.run.paused"); n != 1 {
		t.Errorf("%d pauses, want one: the grant covers the second call", n)
	}
	grants := payloads[events.PermissionGrantPayload](t, st, runID)
	if len(grants) != 1 || grants[0].Scope != events.ScopeRun || grants[0].RuleID != "deploy" || grants[0].ToolName != "shell" {
		t.Fatalf("grants %+v", grants)
	}
	started := payloads[events.ItemStartedPayload](t, st, runID)
	last := dataOf[events.ToolCallData](t, started[len(started)-2].Data) // the second shell call, before the final answer
	if last.GrantID == "" || last.GrantID != grants[0].GrantID {
		t.Errorf("second call started with %+v, want the grant %s recorded", last, grants[0].GrantID)
	}
	e.invariants(st)
}

func TestSessionGrantIsHonouredByLaterRunsOfTheSession(t *testing.T) {
	t.Parallel()
	count := filepath.Join(t.TempDir(), "count")
	e, st, _ := agentEnv(t, deployer("ops", count, "deploy"))
	ship := func(content, key string) string {
		return createRun(t, apiOf(t, st), client.CreateRunRequest{AgentID: "ops", Input: client.UserInput{Content: content},
			PlatformSessionID: "sess-grant"}, key).RunID
	}
	first := ship("ship", "grant-sess")
	waitStatus(t, st, first, "paused", 10*time.Second)
	items := pendingApprovals(t, st, first, 1)
	decide(t, st, first, items[0], "allow", "platform_session", "grant-sess-d")
	waitStatus(t, st, first, "completed", 10*time.Second)
	next := input(t, st, first, "follow_up", "ship again", "grant-sess-next").CreatedRunID
	if next == "" {
		t.Fatal("the follow-up names no run")
	}
	waitStatus(t, st, next, "completed", 10*time.Second)
	if n := countType(t, st, next, "runtime.run.paused"); n != 0 {
		t.Errorf("the follow-up paused %d times; the session grant should cover it", n)
	}
	snap := dataOf[events.SnapshotGovernance](t, payloads[events.SnapshotFrozenPayload](t, st, next)[0].Snapshot)
	if len(snap.Grants) != 1 || snap.Grants[0].Scope != events.ScopePlatformSession {
		t.Errorf("the follow-up's snapshot grants %+v, want the session grant", snap.Grants)
	}
	// A new run of the session (not a follow-up) gets the grant from the read model.
	third := ship("ship once more", "grant-sess-new")
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
	runID := create(t, front, "ops", "ship", "restart-1").RunID
	waitStatus(t, front, runID, "paused", 10*time.Second)
	items := pendingApprovals(t, front, runID, 1)
	exA.Executor.Kill()
	executor("exB", nil)
	// The new owner may take the partition over after the API stopped
	// waiting for the outcome: then the command's outcome is read later.
	res := decide(t, front, runID, items[0], "allow", "item", "restart-1-d")
	outcome := res.Outcome
	eventually.Succeeds(t, 30*time.Second, "the decision after the restart applied", func() error {
		if outcome == client.OutcomeApplied {
			return nil
		}
		cmd, err := apiOf(t, front).GetCommand(t.Context(), res.CommandID)
		if err != nil {
			return err
		}
		if outcome = cmd.Outcome; outcome != client.OutcomeApplied {
			return fmt.Errorf("outcome %q", outcome)
		}
		return nil
	})
	waitStatus(t, front, runID, "completed", 20*time.Second)
	if got := lines(t, count); !slices.Equal(got, []string{"deploy"}) {
		t.Errorf("tool ran %v, want once", got)
	}
	for _, p := range payloads[events.ItemFailedPayload](t, front, runID) {
		t.Errorf("an item failed after the restart: %+v", p)
	}
	e.invariants(front)
}

func TestPausedRunExpiresAfterItsTTL(t *testing.T) {
	t.Parallel()
	count := filepath.Join(t.TempDir(), "count")
	agent := deployer("ops", count, "deploy")
	agent.PauseTTL = 500 * time.Millisecond
	e, st, _ := agentEnv(t, agent)
	runID := create(t, st, "ops", "ship", "ttl-1").RunID
	waitStatus(t, st, runID, "expired", 10*time.Second)
	failed := payloads[events.ItemFailedPayload](t, st, runID)
	if len(failed) != 1 || failed[0].ErrorCode != events.ToolErrExpired {
		t.Errorf("items failed %+v, want the approval closed as expired", failed)
	}
	pendingApprovals(t, st, runID, 0)
	if got := lines(t, count); len(got) != 0 {
		t.Errorf("the tool ran %v", got)
	}
	// A decision after the expiry changes nothing.
	awaiting := eventsOf(t, st, runID, events.ItemAwaitingApproval)
	if len(awaiting) != 1 {
		t.Fatalf("%d items awaited approval, want 1", len(awaiting))
	}
	if res := decide(t, st, runID, awaiting[0].ItemID, "allow", "item", "ttl-1-late"); res.Outcome != client.OutcomeRejected {
		t.Errorf("late decision %+v, want rejected", res)
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
	first := create(t, st, "writer", "write", "snap-1").RunID
	waitItem(t, st, first, events.ItemCommandExecution)

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
	second := runUntil(t, st, "writer", "write again", "snap-2", "completed", 10*time.Second)

	hash := func(runID string) string {
		frozen := payloads[events.SnapshotFrozenPayload](t, st, runID)
		if len(frozen) != 1 {
			t.Fatalf("run %s has %d snapshots, want exactly one", runID, len(frozen))
		}
		return frozen[0].Hash
	}
	h1, h2 := hash(first), hash(second)
	if h1 == h2 {
		t.Errorf("both runs have snapshot %s; the second should have the edited profile's", h1)
	}
	if run := getRun(t, st, first); run.SnapshotHash != "" && run.SnapshotHash != h1 {
		t.Errorf("read model snapshotHash %q, want %s", run.SnapshotHash, h1)
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
	runID := runUntil(t, st, "counter", "count", "usage-1", "completed", 10*time.Second)
	var want client.Usage
	for _, p := range payloads[events.ItemCompletedPayload](t, st, runID) {
		if p.ItemType != events.ItemAssistantMessage {
			continue
		}
		u := dataOf[events.AssistantData](t, p.Data).Usage
		if u == nil {
			t.Fatalf("assistant message %+v without usage", p)
		}
		want.ModelCalls++
		want.PromptTokens += int64(u.PromptTokens)
		want.CompletionTokens += int64(u.CompletionTokens)
		want.TotalTokens += int64(u.TotalTokens)
	}
	if got := getRun(t, st, runID).Usage; got != want || want.TotalTokens == 0 {
		t.Errorf("usage %+v, want %+v (from the events)", got, want)
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
	runID := runUntil(t, front, "ops", "ship", "ttl-restart", "paused", 10*time.Second)
	exA.Executor.Kill()
	executor("exB", nil)
	waitStatus(t, front, runID, "expired", 20*time.Second)
	e.invariants(front)
}
