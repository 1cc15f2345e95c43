package clickhouse_test

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/events/eventstest"
)

// pauseTTLMs is the workload's pause TTL: an hour.
const pauseTTLMs = 3600_000

// snapshot freezes the run's capabilities: the pause TTL and grants.
func (l *runLog) snapshot(grants []events.PermissionGrant) *runLog {
	snap := eventstest.Raw(map[string]any{"profile": "coder", "tools": []string{"shell"}, "pauseTtlMs": pauseTTLMs, "grants": grants})
	sum := sha256.Sum256(snap)
	l.Add(events.Draft{Type: events.CapabilitySnapshotFrozen, Payload: events.SnapshotFrozenPayload{
		Hash: "sha256:" + hex.EncodeToString(sum[:]), Snapshot: snap}})
	return l
}

// pauseFor pauses the run awaiting approval of items.
func (l *runLog) pauseFor(items ...string) *runLog {
	l.Paused(events.PauseAwaitingApproval, items...)
	return l
}

// decide records actor's SubmitApprovalDecision, applied at admission as
// the executor does (eventstest.Log.Decide).
func (l *runLog) decide(cmd, key, item, decision, scope, reason string, actor events.Actor) *runLog {
	l.Decide(eventstest.Decision{CommandID: cmd, ItemID: item, Decision: decision, Scope: scope, Reason: reason,
		Actor: actor, Applied: events.CommandAppliedPayload{IdempotencyKey: key, Actor: l.sender(actor)}})
	return l
}

// block records a call that policy rule forbids, as the engine does:
// started, then failed blocked_by_policy naming the rule, with the rule's
// reason in the message; nobody is asked.
func (l *runLog) block(item, resp string, call events.ToolCallRef, rule, reason string) *runLog {
	return l.blocked(item, resp, call, rule, reason, rule)
}

// blockLegacy records a blocked call as executors did before item.failed
// carried ruleId: the rule is named only in the message.
func (l *runLog) blockLegacy(item, resp string, call events.ToolCallRef, rule, reason string) *runLog {
	return l.blocked(item, resp, call, rule, reason, "")
}

func (l *runLog) blocked(item, resp string, call events.ToolCallRef, rule, reason, ruleID string) *runLog {
	l.startExec(item, resp, call)
	l.Add(events.Draft{Type: events.ItemFailed, ItemID: item, Payload: events.ItemFailedPayload{
		ItemType: events.ItemCommandExecution, ErrorCode: events.ToolErrBlockedByPolicy,
		Message: "blocked by policy rule " + rule + ": " + reason, RuleID: ruleID}})
	return l
}

// compact records a compaction of everything so far, keeping item.
func (l *runLog) compact(trigger, keep string, before, after int) *runLog {
	l.Compacted(events.ContextCompactedPayload{
		ArtifactID: events.DerivedID("cmp", l.RunID(), trigger), TriggerReason: trigger,
		Summary:         events.CompactionSummary{UserGoal: "tidy the repo", ExecutedDecisions: []string{}, ModifiedFiles: []string{}, PendingTasks: []string{}},
		RetainedItemIDs: []string{keep}, TokenStats: events.TokenStats{BeforeTokens: before, AfterTokens: after},
		Usage: &events.Usage{PromptTokens: before, CompletionTokens: 600, TotalTokens: before + 600}})
	return l
}
