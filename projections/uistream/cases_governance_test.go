package uistream_test

import (
	"maps"
	"testing"

	"github.com/xbot-runtime/xbot/events"
)

// The golden cases of governance (flow: policy, approvals, grants, expiry).
func init() { maps.Copy(goldenCases, governanceCases) }

var (
	callPush = events.ToolCallRef{ID: "call_7", Name: "shell", Arguments: `{"command":"git push"}`}
	callTags = events.ToolCallRef{ID: "call_8", Name: "shell", Arguments: `{"command":"git push --tags"}`}
	cmdD     = "cmd_01J0000000000000000000000D"
)

// awaitingTwo is a run whose response asks for two calls that both wait
// for approval at once, then pauses.
func awaitingTwo(t testing.TB, a, b events.ToolCallRef, ruleA, ruleB string) *logBuilder {
	l := started(t, runA, cmdA, "ship it")
	l.response(r1, 0, []string{"Two steps."}, a, b)
	l.ToolStarted(tool1, r1, events.ItemCommandExecution, a).Ask(tool1, a, ruleA, "needs a person")
	l.ToolStarted(tool2, r1, events.ItemCommandExecution, b).Ask(tool2, b, ruleB, "needs a person")
	l.Paused(events.PauseAwaitingApproval, tool1, tool2)
	return l
}

var governanceCases = map[string]func(t testing.TB) []events.Envelope{
	// tool1 is allowed for itself while tool2 still waits: the run stays
	// paused and the decision shows at once; tool2's deny resumes the run.
	"approvals_decided_one_by_one": func(t testing.TB) []events.Envelope {
		b := awaitingTwo(t, callRm, callPush, "destructive-shell", "git-push")
		b.decide(cmdB, tool1, events.DecisionAllow, events.ScopeItem, "")
		b.decide(cmdC, tool2, events.DecisionDeny, events.ScopeItem, "not today")
		b.ToolCompleted(tool1, events.ItemCommandExecution, callRm, events.ToolResultData{Output: "exit code 0"})
		b.response(r2, 1, []string{"Cleaned, not pushed."})
		return b.Completed("").Events()
	},
	// One allow for the run covers the sibling call of the same tool and
	// rule: both are answered in one step and the run resumes.
	"approval_grant_covers_sibling": func(t testing.TB) []events.Envelope {
		b := awaitingTwo(t, callPush, callTags, "git-push", "git-push")
		b.decide(cmdB, tool1, events.DecisionAllow, events.ScopeRun, "release")
		b.ToolCompleted(tool1, events.ItemCommandExecution, callPush, events.ToolResultData{Output: "exit code 0"})
		b.ToolCompleted(tool2, events.ItemCommandExecution, callTags, events.ToolResultData{Output: "exit code 0"})
		b.response(r2, 1, []string{"Pushed."})
		return b.Completed("").Events()
	},
	// A call policy forbids fails at once with the rule's reason; nobody is
	// asked and the run goes on.
	"blocked_by_policy": func(t testing.TB) []events.Envelope {
		b := started(t, runA, cmdA, "clean everything")
		b.response(r1, 0, nil, callRm)
		b.ToolStarted(tool1, r1, events.ItemCommandExecution, callRm)
		b.ItemFailed(tool1, events.ItemCommandExecution, events.ToolErrBlockedByPolicy, "deleting build output needs a ticket")
		b.response(r2, 1, []string{"I may not delete that."})
		return b.Completed("").Events()
	},
	// Nobody answers before the pause TTL: both requests expire, then the
	// run; a decision that comes too late has no effect.
	"expired_awaiting_approval": func(t testing.TB) []events.Envelope {
		b := awaitingTwo(t, callRm, callPush, "destructive-shell", "git-push")
		b.ItemFailed(tool1, events.ItemCommandExecution, events.ToolErrExpired, "nobody answered before the run's pause expired")
		b.ItemFailed(tool2, events.ItemCommandExecution, events.ToolErrExpired, "nobody answered before the run's pause expired")
		b.Add(events.Draft{Type: events.RunExpired, Payload: events.RunExpiredPayload{PauseReason: events.PauseAwaitingApproval,
			PausedAt: b.Events()[len(b.Events())-3].OccurredAt, PauseTTLMs: 3600_000}})
		return b.CommandNoEffect(cmdD, events.CommandNoEffectPayload{CommandType: "SubmitApprovalDecision",
			IdempotencyKey: "late", Reason: "the run expired before the command could apply"}).Events()
	},
}
