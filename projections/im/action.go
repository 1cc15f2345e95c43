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

// approvalActions returns the buttons of an item awaiting approval: allow and
// deny, each for this item only.
func approvalActions(msgID, runID, itemID string) []Action {
	out := make([]Action, 0, 2)
	for _, d := range []struct{ decision, label string }{{decisionAllow, "Allow"}, {decisionDeny, "Deny"}} {
		a := Approval{RunID: runID, ItemID: itemID, Decision: d.decision, Scope: scopeItem}
		out = append(out, Action{ID: msgID + "." + d.decision, Label: d.label, Payload: ActionPayload(a), Approval: &a})
	}
	return out
}
