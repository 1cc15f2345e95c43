package uistream_test

import (
	"testing"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/events/eventstest"
)

// The golden cases: one log per shape of reply, together covering every
// event type of the catalog (TestGoldenCasesCoverTheCatalog).

const (
	runA   = "run_01J0000000000000000000000A"
	cmdA   = "cmd_01J0000000000000000000000A"
	cmdB   = "cmd_01J0000000000000000000000B"
	cmdC   = "cmd_01J0000000000000000000000C"
	r1, r2 = "itm_resp1", "itm_resp2"
	r3     = "itm_resp3"
	think  = "itm_think"
	tool1  = "itm_tool1"
	tool2  = "itm_tool2"
	tool3  = "itm_tool3"
)

var (
	callLs    = events.ToolCallRef{ID: "call_1", Name: "shell", Arguments: `{"command":"ls"}`}
	callWrite = events.ToolCallRef{ID: "call_2", Name: "write_file", Arguments: `{"path":"notes.md","content":"one\n"}`}
	callBad   = events.ToolCallRef{ID: "call_3", Name: "read_file", Arguments: `{"path":`}
	callRm    = events.ToolCallRef{ID: "call_4", Name: "shell", Arguments: `{"command":"rm -rf build"}`}
	callAsk   = events.ToolCallRef{ID: "call_5", Name: "ask_user", Arguments: `{"question":"Which branch?"}`}
	callMCP   = events.ToolCallRef{ID: "call_6", Name: "github.search", Arguments: `{"q":"xbot"}`}
)

func accepted(typ string) events.CommandAcceptedPayload {
	return events.CommandAcceptedPayload{CommandType: typ, IdempotencyKey: "k-" + typ}
}

func applied(typ string) events.CommandAppliedPayload {
	return events.CommandAppliedPayload{CommandType: typ, IdempotencyKey: "k-" + typ}
}

// approvalLog is a run whose shell call waits for approval and gets d,
// applied at once as the executor does: the decision, a denied call's
// failure, applied, resumed.
func approvalLog(t testing.TB, d string) *logBuilder {
	b := started(t, runA, cmdA, "clean the build")
	b.response(r1, 0, []string{"I will delete the build directory."}, callRm)
	b.ToolStarted(tool1, r1, events.ItemCommandExecution, callRm).Ask(tool1, callRm, "destructive-shell", "deletes files")
	b.Paused(events.PauseAwaitingApproval, tool1)
	return b.decide(cmdB, tool1, d, "item", "")
}

var goldenCases = map[string]func(t testing.TB) []events.Envelope{
	"text_only": func(t testing.TB) []events.Envelope {
		b := started(t, runA, cmdA, "hello")
		b.response(r1, 0, []string{"Hel", "lo!"})
		return b.Completed("Hello!").Events()
	},
	"reasoning": func(t testing.TB) []events.Envelope {
		b := started(t, runA, cmdA, "2+2?")
		b.ItemStarted(think, events.ItemReasoning, nil).Deltas(think, "Adding ", "two and two.")
		b.ItemCompleted(think, events.ItemReasoning, events.ItemStatusCompleted, "Adding two and two.", nil)
		b.response(r1, 0, []string{"4"})
		return b.Completed("4").Events()
	},
	"tools": func(t testing.TB) []events.Envelope {
		b := started(t, runA, cmdA, "look around")
		b.response(r1, 0, []string{"Let me look."}, callLs, callWrite, callBad)
		b.ToolStarted(tool1, r1, events.ItemCommandExecution, callLs).Deltas(tool1, "README.md\n")
		b.ToolCompleted(tool1, events.ItemCommandExecution, callLs, events.ToolResultData{Output: "exit code 0\nREADME.md\n",
			Exec: &events.ExecData{Command: "ls", Cwd: "/work", ExitCode: 0, Stdout: "README.md\n", DurationMs: 3}})
		b.ToolStarted(tool2, r1, events.ItemFileChange, callWrite)
		b.ToolCompleted(tool2, events.ItemFileChange, callWrite, events.ToolResultData{Output: "wrote notes.md (4 bytes)",
			FileChange: &events.FileChangeData{Path: "notes.md", Diff: "--- /dev/null\n+++ b/notes.md\n@@ -0,0 +1 @@\n+one\n", Created: true, Bytes: 4}})
		b.ToolStarted(tool3, r1, events.ItemToolCall, callBad)
		b.ItemFailed(tool3, events.ItemToolCall, events.ToolErrInvalidArguments, "arguments are not valid JSON")
		b.response(r2, 1, nil) // a response with neither text nor calls gets no text part
		b.response(r3, 2, []string{"Done."})
		return b.Completed("Done.").Events()
	},
	// A provider plugin's sandbox is attached before the tool that needs
	// it: nothing of it reaches the stream.
	"sandbox_attached": func(t testing.TB) []events.Envelope {
		b := started(t, runA, cmdA, "look around")
		b.response(r1, 0, []string{"Let me look."}, callLs)
		b.Add(events.Draft{Type: events.SandboxAttached, Payload: events.SandboxAttachedPayload{Provider: "local-process", SandboxID: "lp-1"}})
		b.ToolStarted(tool1, r1, events.ItemCommandExecution, callLs).Deltas(tool1, "README.md\n")
		b.ToolCompleted(tool1, events.ItemCommandExecution, callLs, events.ToolResultData{Output: "exit code 0\nREADME.md\n",
			Exec: &events.ExecData{Command: "ls", Cwd: "/workspace", ExitCode: 0, Stdout: "README.md\n", DurationMs: 3}})
		b.response(r2, 1, []string{"Done."})
		return b.Completed("Done.").Events()
	},
	"approval_allowed": func(t testing.TB) []events.Envelope {
		b := approvalLog(t, "allow")
		b.Deltas(tool1, "removed build\n")
		b.ToolCompleted(tool1, events.ItemCommandExecution, callRm, events.ToolResultData{Output: "exit code 0",
			Exec: &events.ExecData{Command: "rm -rf build", Cwd: "/work", Stdout: "removed build\n", DurationMs: 9}})
		b.response(r2, 1, []string{"Deleted."})
		return b.Completed("Deleted.").Events()
	},
	"approval_denied": func(t testing.TB) []events.Envelope {
		b := approvalLog(t, "deny")
		b.response(r2, 1, []string{"Understood, I left it."})
		return b.Completed("").Events()
	},
	"clarification": func(t testing.TB) []events.Envelope {
		b := started(t, runA, cmdA, "deploy")
		b.response(r1, 0, nil, callAsk)
		b.ToolStarted(tool1, r1, events.ItemClarificationRequest, callAsk)
		b.Paused(events.PauseAwaitingUserInput, tool1)
		b.CommandAccepted(cmdB, accepted("AppendUserInput"))
		b.ToolCompleted(tool1, events.ItemClarificationRequest, callAsk, events.ToolResultData{Output: "main"})
		b.CommandApplied(cmdB, applied("AppendUserInput"))
		b.Resumed(cmdB)
		b.response(r2, 1, []string{"Deploying main."})
		return b.Completed("").Events()
	},
	"steer": func(t testing.TB) []events.Envelope {
		b := started(t, runA, cmdA, "build the site")
		b.response(r1, 0, []string{"Building."}, callLs)
		b.ToolStarted(tool1, r1, events.ItemCommandExecution, callLs)
		b.CommandAccepted(cmdB, accepted("AppendUserInput"))
		b.ToolCompleted(tool1, events.ItemCommandExecution, callLs, events.ToolResultData{Output: "ok"})
		b.Steer("itm_user", cmdB, "use the dev branch")
		b.CommandApplied(cmdB, applied("AppendUserInput"))
		b.response(r2, 1, []string{"Switching to dev."})
		return b.Completed("").Events()
	},
	"failed": func(t testing.TB) []events.Envelope {
		b := started(t, runA, cmdA, "hi")
		b.ItemStarted(r1, events.ItemAssistantMessage, nil).Deltas(r1, "Part")
		b.ItemFailed(r1, events.ItemAssistantMessage, events.FailModelError, "server_error: upstream 500")
		return b.Failed(events.FailModelError, "server_error: upstream 500").Events()
	},
	"cancelled_mid_stream": func(t testing.TB) []events.Envelope {
		b := started(t, runA, cmdA, "write an essay")
		b.ItemStarted(r1, events.ItemAssistantMessage, nil).Deltas(r1, "Once upon")
		b.CommandAccepted(cmdB, accepted("CancelRun"))
		b.ItemCompleted(r1, events.ItemAssistantMessage, events.ItemStatusTruncated, "Once upon", nil)
		b.CommandApplied(cmdB, applied("CancelRun"))
		return b.Cancelled(cmdB, "taking too long").Events()
	},
	"queued_then_started": func(t testing.TB) []events.Envelope {
		b := newLog(t, runA).accept(cmdA, "k", "", "hi")
		b.Queued("", 2)
		b.Queued("", 1)
		b.Started("ex-1")
		b.response(r1, 0, []string{"Hi!"})
		return b.Completed("Hi!").Events()
	},
	"resumed_while_key_taken": func(t testing.TB) []events.Envelope {
		b := started(t, runA, cmdA, "clean the build")
		b.response(r1, 0, []string{"I will delete the build directory."}, callRm)
		b.ToolStarted(tool1, r1, events.ItemCommandExecution, callRm).Ask(tool1, callRm, "destructive-shell", "deletes files")
		b.Paused(events.PauseAwaitingApproval, tool1)
		b.Decide(eventstest.Decision{CommandID: cmdB, ItemID: tool1, Decision: "allow", Scope: "item",
			Actor: events.Actor{Type: "user", ID: "u"}, Applied: applied("SubmitApprovalDecision"), QueuedAt: 2})
		b.Queued("", 1)
		b.Resumed("")
		b.ToolCompleted(tool1, events.ItemCommandExecution, callRm, events.ToolResultData{Output: "exit code 0"})
		b.response(r2, 1, []string{"Deleted."})
		return b.Completed("Deleted.").Events()
	},
	"cancelled_while_queued": func(t testing.TB) []events.Envelope {
		b := newLog(t, runA).accept(cmdA, "k", "", "hi")
		b.CommandAccepted(cmdB, accepted("CancelRun"))
		b.CommandApplied(cmdB, applied("CancelRun"))
		return b.Cancelled(cmdB, "").Events()
	},
	"cancelled_while_awaiting_approval": func(t testing.TB) []events.Envelope {
		b := started(t, runA, cmdA, "clean")
		b.response(r1, 0, nil, callRm)
		b.ToolStarted(tool1, r1, events.ItemCommandExecution, callRm)
		b.Add(events.Draft{Type: events.ItemAwaitingApproval, ItemID: tool1, Payload: events.ItemAwaitingApprovalPayload{
			ItemType: events.ItemCommandExecution}}) // an older writer's request: no approvalId, rule or reason
		b.Paused(events.PauseAwaitingApproval, tool1)
		b.CommandAccepted(cmdB, accepted("CancelRun"))
		b.ItemFailed(tool1, events.ItemCommandExecution, events.ToolErrCancelled, "the run was cancelled")
		b.CommandApplied(cmdB, applied("CancelRun"))
		return b.Cancelled(cmdB, "").Events()
	},
	"expired_while_asking": func(t testing.TB) []events.Envelope {
		b := started(t, runA, cmdA, "deploy")
		b.response(r1, 0, []string{"One question first."}, callAsk)
		b.ToolStarted(tool1, r1, events.ItemClarificationRequest, callAsk)
		b.Paused(events.PauseAwaitingUserInput, tool1)
		b.ItemFailed(tool1, events.ItemClarificationRequest, events.ToolErrExpired, "nobody answered before the run's pause expired")
		return b.Add(events.Draft{Type: events.RunExpired, Payload: events.RunExpiredPayload{PauseReason: events.PauseAwaitingUserInput,
			PausedAt: 1_700_000_008_000, PauseTTLMs: 3600_000}}).Events()
	},
	"crash_recovery": func(t testing.TB) []events.Envelope {
		b := started(t, runA, cmdA, "make it")
		b.response(r1, 0, []string{"Building."}, callLs)
		b.ToolStarted(tool1, r1, events.ItemCommandExecution, callLs)
		b.Add(events.Draft{Type: events.RunCheckpointRestored, Payload: events.CheckpointRestoredPayload{LastSeq: 7, ExecutorID: "ex-2", OpenItems: []string{tool1}}})
		b.ItemFailed(tool1, events.ItemCommandExecution, events.ToolErrRuntimeLost, "the executor running this item stopped")
		b.ItemStarted(think, events.ItemReasoning, nil).Deltas(think, "Hmm")
		b.ItemCompleted(think, events.ItemReasoning, events.ItemStatusCompleted, "Hmm", nil)
		b.ItemStarted(r2, events.ItemAssistantMessage, nil).Deltas(r2, "parti")
		b.Add(events.Draft{Type: events.RunCheckpointRestored, Payload: events.CheckpointRestoredPayload{LastSeq: 14, ExecutorID: "ex-3", OpenItems: []string{r2}}})
		b.ItemFailed(r2, events.ItemAssistantMessage, events.FailRuntimeLost, "the executor running this item stopped")
		b.response(r3, 1, []string{"Recovered."})
		return b.Completed("").Events()
	},
	"follow_up_then_late_commands": func(t testing.TB) []events.Envelope {
		followUp := "cmd_01J00000000000000000000FUP"
		b := newLog(t, runA).accept(events.DerivedID("cmd", "follow_up", followUp), "follow_up:"+followUp, "run_01J0000000000000000000000P", "and then?")
		b.Started("")
		b.response(r1, 0, []string{"Then this."})
		b.Completed("")
		b.CommandApplied(cmdB, events.CommandAppliedPayload{CommandType: "AppendUserInput", IdempotencyKey: "k2",
			CreatedRunID: "run_01J000000000000000000000NX"})
		b.CommandRejected(cmdC, events.CommandRejectedPayload{CommandType: "CancelRun", IdempotencyKey: "k3", Code: "invalid_state"})
		b.CommandDuplicate("cmd_01J0000000000000000000000D", events.CommandDuplicatePayload{CommandType: "AppendUserInput",
			IdempotencyKey: "k2", OriginalCommandID: cmdB, OriginalOutcome: "applied"})
		return b.CommandNoEffect("cmd_01J0000000000000000000000E", events.CommandNoEffectPayload{CommandType: "CancelRun",
			IdempotencyKey: "k4", Reason: "the run has ended"}).Events()
	},
	"governance_and_other_items": func(t testing.TB) []events.Envelope {
		b := newLog(t, runA).accept(cmdA, "k", "", "plan it")
		b.Add(events.Draft{Type: events.CapabilitySnapshotFrozen, Payload: events.SnapshotFrozenPayload{Hash: "sha256:abc", Snapshot: eventstest.Raw(map[string]any{"pauseTtlMs": 60000,
			"options": map[string]any{"workingDirectory": "docs", "safetyMode": "read-only", "approvalMode": "auto", "networkAccess": false}})}})
		b.Started("")
		b.Add(events.Draft{Type: events.PermissionGrantApplied, Payload: events.PermissionGrantPayload{GrantID: "grt_1", Scope: "run", ToolName: "shell", RuleID: "r"}})
		b.ItemStarted("itm_plan", events.ItemPlan, nil).Deltas("itm_plan", "1. look")
		b.ItemCompleted("itm_plan", events.ItemPlan, events.ItemStatusCompleted, "1. look\n2. act", nil)
		b.ItemStarted("itm_compact", events.ItemContextCompaction, nil)
		b.ItemCompleted("itm_compact", events.ItemContextCompaction, events.ItemStatusCompleted, "summary", nil)
		b.Add(events.Draft{Type: events.ContextCompacted, Payload: events.ContextCompactedPayload{ArtifactID: "cmp_01J000000000000000000000C1",
			CutoffEventSeq: 7, TriggerReason: events.CompactBeforeModelRequest, SourceRange: events.SeqRange{FromSeq: 1, ToSeq: 7},
			Summary: events.CompactionSummary{UserGoal: "plan it", ExecutedDecisions: []string{"made a plan"},
				ModifiedFiles: []string{}, PendingTasks: []string{"act"}},
			RetainedItemIDs: []string{"itm_plan"}, TokenStats: events.TokenStats{BeforeTokens: 9000, AfterTokens: 700},
			Usage: &events.Usage{PromptTokens: 9000, CompletionTokens: 300, TotalTokens: 9300}}})
		b.response(r1, 0, nil, callMCP)
		b.ToolStarted(tool1, r1, events.ItemMCPToolCall, callMCP)
		b.ToolCompleted(tool1, events.ItemMCPToolCall, callMCP, events.ToolResultData{Output: `{"hits":1}`})
		b.ItemStarted(think, events.ItemReasoning, nil).Deltas(think, "Stopping")
		b.ItemCompleted(think, events.ItemReasoning, events.ItemStatusTruncated, "Stopping", nil)
		b.CommandRejected(cmdB, events.CommandRejectedPayload{CommandType: "RequestCompaction", IdempotencyKey: "k5", Code: "not_implemented"})
		b.Failed(events.FailBudgetExhausted, "")
		// A session grant revoked after the run ended: nothing to show.
		return b.Add(events.Draft{Type: events.PermissionGrantRevoked, Payload: events.PermissionGrantRevokedPayload{
			GrantID: "grt_1", Scope: "run", ToolName: "shell", RuleID: "r"}}).Events()
	},
}
