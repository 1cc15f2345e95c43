package clickhouse_test

import (
	"testing"

	"github.com/xbot-runtime/xbot/events"
)

// acme4 and acme5 are one session: bob allows dave's kubectl reads for the
// whole session, the follow-up run inherits the grant, and nobody answers
// its request to delete a pod, so it expires. Both runs try rm -rf /, which
// the built-in rule default.rm-root blocks without asking.

var acme4Start = day1 + 2*dayMs + 9*3600_000

var rmRoot = shell("call_2", "rm -rf /")

// rmRootRule is the built-in rule that blocks rm -rf /, and rmRootReason its reason.
const (
	rmRootRule   = "default.rm-root"
	rmRootReason = "deleting the root file system is never allowed"
)

// acme4Grant is the platform_session grant bob gives in acme4.
func acme4Grant() events.PermissionGrant {
	return events.PermissionGrant{GrantID: events.DerivedID("grt", wid("cmd", "C17")), Scope: events.ScopePlatformSession,
		ToolName: "shell", RuleID: "kubectl", RunID: wid("run", "ACME4"), ItemID: wid("itm", "ACME4X2"), Actor: bob}
}

func acme4(tb testing.TB) *runLog {
	pods := shell("call_1", "kubectl get pods")
	l := newRun(tb, "acme", wid("run", "ACME4"), acme4Start)
	l.create(wid("cmd", "C16"), "create-4", dave)
	l.response(wid("itm", "ACME4M1"), 0, 180, pods, rmRoot)
	l.startExec(wid("itm", "ACME4X2"), wid("itm", "ACME4M1"), pods).
		Ask(wid("itm", "ACME4X2"), pods, "kubectl", "talks to the production cluster")
	l.block(wid("itm", "ACME4X3"), wid("itm", "ACME4M1"), rmRoot, rmRootRule, rmRootReason).Paused(events.PauseAwaitingApproval, wid("itm", "ACME4X2"))
	l.decide(wid("cmd", "C17"), "approve-4", wid("itm", "ACME4X2"), "allow", "platform_session", "read-only", bob)
	l.finishExec(wid("itm", "ACME4X2"), pods, "kubectl get pods", 0)
	l.response(wid("itm", "ACME4M2"), 1, 110)
	l.Completed("api-0 is crash-looping.")
	l.CommandApplied(wid("cmd", "C18"), events.CommandAppliedPayload{
		CommandType: "AppendUserInput", IdempotencyKey: "follow-4", CreatedRunID: wid("run", "ACME5"), Actor: l.sender(dave)})
	return l
}

// acme5 is acme4's follow-up: kubectl get pods runs under the inherited
// grant; kubectl delete needs another rule's approval and expires; bob's
// cancel comes too late.
func acme5(tb testing.TB) *runLog {
	pods, del := shell("call_1", "kubectl get pods"), shell("call_3", "kubectl delete pod api-0")
	l := newRunIn(tb, "acme", wid("run", "ACME5"), "sess_"+wid("run", "ACME4")[4:], acme4Start+5*60_000)
	l.create(wid("cmd", "C19"), "follow_up:"+wid("cmd", "C18"), dave, acme4Grant())
	l.response(wid("itm", "ACME5M1"), 0, 240, pods, rmRoot, del)
	l.startExec(wid("itm", "ACME5X1"), wid("itm", "ACME5M1"), pods).finishExec(wid("itm", "ACME5X1"), pods, "kubectl get pods", 0)
	l.block(wid("itm", "ACME5X2"), wid("itm", "ACME5M1"), rmRoot, rmRootRule, rmRootReason)
	l.startExec(wid("itm", "ACME5X3"), wid("itm", "ACME5M1"), del).
		Ask(wid("itm", "ACME5X3"), del, "kubectl-write", "changes the production cluster").Paused(events.PauseAwaitingApproval, wid("itm", "ACME5X3"))
	l.Expire()
	return l.noEffect(wid("cmd", "C21"), "cancel-5", "CancelRun", "run is already expired", bob)
}
