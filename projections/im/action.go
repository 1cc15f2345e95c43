package im

import (
	"strings"

	"github.com/xbot-runtime/xbot/events"
)

// payloadPrefix starts every approval button payload.
const payloadPrefix = "approval"

// ActionPayload returns the payload of an approval button,
// "approval:<runId>:<itemId>:<decision>:<scope>". Run and item ids never
// contain ':' (they are prefixed ULIDs or UUIDs), so the payload splits back
// unambiguously; it stays within [A-Za-z0-9._:-].
func ActionPayload(a Approval) string {
	return strings.Join([]string{payloadPrefix, a.RunID, a.ItemID, a.Decision, a.Scope}, ":")
}

// ParsePayload decodes a payload made by ActionPayload. It reports false for
// anything else (another button, text a user typed), so an IM worker can try
// it on every action it receives.
func ParsePayload(payload string) (Approval, bool) {
	parts := strings.Split(payload, ":")
	if len(parts) != 5 || parts[0] != payloadPrefix {
		return Approval{}, false
	}
	a := Approval{RunID: parts[1], ItemID: parts[2], Decision: parts[3], Scope: parts[4]}
	ok := events.ValidID("run", a.RunID) && events.ValidID("itm", a.ItemID) &&
		(a.Decision == decisionAllow || a.Decision == decisionDeny) &&
		(a.Scope == scopeItem || a.Scope == scopeRun || a.Scope == scopeSession)
	if !ok {
		return Approval{}, false
	}
	return a, true
}

// Decisions and scopes of SubmitApprovalDecision (commands.SubmitApprovalDecisionPayload).
const (
	decisionAllow = "allow"
	decisionDeny  = "deny"
	scopeItem     = "item"
	scopeRun      = "run"
	scopeSession  = "platform_session"
)

// approvalActions returns the buttons of an item awaiting approval: allow
// this call, allow the tool under this rule for the rest of the run, for the
// conversation (only when the run has one: a platform_session grant is
// inherited by the session's later runs), and deny.
func approvalActions(msgID, runID, itemID string, inSession bool) []Action {
	choices := []struct{ decision, scope, label string }{
		{decisionAllow, scopeItem, "Allow"},
		{decisionAllow, scopeRun, "Allow for this run"},
		{decisionAllow, scopeSession, "Allow for this conversation"},
		{decisionDeny, scopeItem, "Deny"},
	}
	out := make([]Action, 0, len(choices))
	for _, c := range choices {
		if c.scope == scopeSession && !inSession {
			continue
		}
		a := Approval{RunID: runID, ItemID: itemID, Decision: c.decision, Scope: c.scope}
		out = append(out, Action{ID: actionID(msgID, c.decision, c.scope), Label: c.label, Payload: ActionPayload(a), Approval: &a})
	}
	return out
}

// actionID is "<message id>.<decision>" for a decision on this item only and
// "<message id>.<decision>.<scope>" for a wider one.
func actionID(msgID, decision, scope string) string {
	if scope == scopeItem {
		return msgID + "." + decision
	}
	return msgID + "." + decision + "." + scope
}
