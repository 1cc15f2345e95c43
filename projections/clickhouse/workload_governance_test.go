package clickhouse_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/xbot-runtime/xbot/events"
)

// pauseTTLMs is the workload's pause TTL: an hour.
const pauseTTLMs = 3600_000

// inSession puts the run in platform session sess (a follow-up's).
func (l *runLog) inSession(sess string) *runLog {
	l.id.PlatformSessionID = sess
	return l
}

// snapshot freezes the run's capabilities: the pause TTL and grants.
func (l *runLog) snapshot(grants []events.PermissionGrant) *runLog {
	snap := rawJSON(l.tb, map[string]any{"profile": "coder", "tools": []string{"shell"}, "pauseTtlMs": pauseTTLMs, "grants": grants})
	sum := sha256.Sum256(snap)
	return l.add(events.Draft{Type: events.CapabilitySnapshotFrozen, Payload: events.SnapshotFrozenPayload{
		Hash: "sha256:" + hex.EncodeToString(sum[:]), Snapshot: snap}})
}

// ask records that policy rule asks for approval of item's call (the
// engine pauses once the response's other calls are done: pauseFor).
func (l *runLog) ask(item string, call events.ToolCallRef, rule, reason string) *runLog {
	return l.add(events.Draft{Type: events.ItemAwaitingApproval, ItemID: item, Payload: events.ItemAwaitingApprovalPayload{
		ItemType: events.ItemCommandExecution, ToolName: call.Name, Input: json.RawMessage(call.Arguments),
		ApprovalID: approvalID(l.id.RunID, item), RuleID: rule, Reason: reason}})
}

func approvalID(runID, item string) string { return events.DerivedID("apr", runID, item) }

// pauseFor pauses the run awaiting approval of items.
func (l *runLog) pauseFor(items ...string) *runLog {
	return l.add(events.Draft{Type: events.RunPaused, Payload: events.RunPausedPayload{
		PauseReason: events.PauseAwaitingApproval, ItemIDs: items}})
}

// decide records a SubmitApprovalDecision by actor, applied at admission as
// the executor does: the decision; a deny fails the item; an allow wider than
// the item applies a grant that also resolves the other items awaiting for
// the same tool and rule; applied; resumed once nothing awaits.
func (l *runLog) decide(cmd, key, item, decision, scope, reason string, actor events.Actor) *runLog {
	it, _ := l.st.Item(item)
	l.add(events.Draft{Type: events.ApprovalDecisionSubmitted, ItemID: item, CommandID: cmd, Payload: events.ApprovalDecisionPayload{
		Decision: decision, Scope: scope, Reason: reason, Actor: actor, ApprovalID: approvalID(l.id.RunID, item)}})
	switch {
	case decision == events.DecisionDeny:
		l.add(events.Draft{Type: events.ItemFailed, ItemID: item, CommandID: cmd, Payload: events.ItemFailedPayload{
			ItemType: it.Type, ErrorCode: events.ToolErrDeniedByUser, Message: "denied by user: " + reason}})
	case scope != events.ScopeItem:
		g := events.PermissionGrant{GrantID: events.DerivedID("grt", cmd), Scope: scope, ToolName: it.ToolName,
			RuleID: it.RuleID, RunID: l.id.RunID, ItemID: item, Actor: actor}
		l.add(events.Draft{Type: events.PermissionGrantApplied, CommandID: cmd, Payload: g})
		for _, other := range l.st.AwaitingApproval() {
			if g.Covers(other.ToolName, other.RuleID) {
				l.add(events.Draft{Type: events.ApprovalDecisionSubmitted, ItemID: other.ID, CommandID: cmd,
					Payload: events.ApprovalDecisionPayload{Decision: events.DecisionAllow, Scope: scope, Actor: actor,
						ApprovalID: approvalID(l.id.RunID, other.ID), GrantID: g.GrantID,
						Reason: "covered by the grant given for item " + item}})
			}
		}
	}
	l.applied(cmd, key, "SubmitApprovalDecision", actor)
	if len(l.st.AwaitingApproval()) == 0 {
		l.add(events.Draft{Type: events.RunResumed, CommandID: cmd})
	}
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
	return l.add(events.Draft{Type: events.ItemFailed, ItemID: item, Payload: events.ItemFailedPayload{
		ItemType: events.ItemCommandExecution, ErrorCode: events.ToolErrBlockedByPolicy,
		Message: "blocked by policy rule " + rule + ": " + reason, RuleID: ruleID}})
}

// expire ends the paused run when its pause TTL runs out: every item still
// awaiting fails as expired, then the run expires.
func (l *runLog) expire() *runLog {
	deadline, ok := l.st.PauseDeadline()
	if !ok {
		l.tb.Fatalf("%s is not paused with a TTL", l.id.RunID)
	}
	l.now = deadline
	for _, it := range l.st.AwaitingApproval() {
		l.add(events.Draft{Type: events.ItemFailed, ItemID: it.ID, Payload: events.ItemFailedPayload{
			ItemType: it.Type, ErrorCode: events.ToolErrExpired, Message: "nobody answered before the run's pause expired"}})
	}
	return l.add(events.Draft{Type: events.RunExpired, Payload: events.RunExpiredPayload{
		PauseReason: l.st.PauseReason, PausedAt: l.st.PausedAt, PauseTTLMs: l.st.PauseTTLMs}})
}

// compact records a compaction of everything so far, keeping item.
func (l *runLog) compact(trigger, keep string, before, after int) *runLog {
	cutoff := l.st.LastSeq
	return l.add(events.Draft{Type: events.ContextCompacted, Payload: events.ContextCompactedPayload{
		ArtifactID: events.DerivedID("cmp", l.id.RunID, trigger), CutoffEventSeq: cutoff, TriggerReason: trigger,
		SourceRange:     events.SeqRange{FromSeq: 1, ToSeq: cutoff},
		Summary:         events.CompactionSummary{UserGoal: "tidy the repo", ExecutedDecisions: []string{}, ModifiedFiles: []string{}, PendingTasks: []string{}},
		RetainedItemIDs: []string{keep}, TokenStats: events.TokenStats{BeforeTokens: before, AfterTokens: after},
		Usage: &events.Usage{PromptTokens: before, CompletionTokens: 600, TotalTokens: before + 600}}})
}
