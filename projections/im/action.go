package im

import (
	"strings"

	"github.com/xbot-runtime/xbot/events"
)

// Prefixes of approval button payloads: payloadPrefix the long form that
// names the run and the item, shortPrefix the form that names the approval.
const (
	payloadPrefix = "approval"
	shortPrefix   = "apr"
)

// MaxPayloadBytes is the longest payload a button may carry on the chat
// platforms with the tightest limit (64 bytes of callback data); every
// payload of a message with an approvalId fits it.
const MaxPayloadBytes = 64

// ActionPayload returns the long payload of an approval button,
// "approval:<runId>:<itemId>:<decision>:<scope>" (up to 93 bytes). Run and
// item ids never contain ':' (they are prefixed ULIDs or UUIDs), so the
// payload splits back unambiguously; it stays within [A-Za-z0-9._:-]. The
// IM view uses it only for requests without an approvalId (logs written
// before approvals had ids); it stays decodable for the buttons already sent.
func ActionPayload(a Approval) string {
	return strings.Join([]string{payloadPrefix, a.RunID, a.ItemID, a.Decision, a.Scope}, ":")
}

// ShortPayload returns the payload of an approval button that names the
// approval, "apr:<approvalId>:<decision>:<scope>": at most 57 bytes, within
// MaxPayloadBytes. The run and the item are looked up by the approval id
// (GET /v1/approvals?approvalId=), so the payload carries nothing else.
func ShortPayload(approvalID, decision, scope string) string {
	return strings.Join([]string{shortPrefix, approvalID, decision, scope}, ":")
}

// ParsePayload decodes a payload made by ActionPayload (RunID and ItemID
// set) or ShortPayload (ApprovalID set; look the run and item up by it). It
// reports false for anything else (another button, text a user typed), so
// an IM worker can try it on every action it receives.
func ParsePayload(payload string) (Approval, bool) {
	parts := strings.Split(payload, ":")
	var a Approval
	switch {
	case len(parts) == 5 && parts[0] == payloadPrefix:
		a = Approval{RunID: parts[1], ItemID: parts[2], Decision: parts[3], Scope: parts[4]}
		if !events.ValidID("run", a.RunID) || !events.ValidID("itm", a.ItemID) {
			return Approval{}, false
		}
	case len(parts) == 4 && parts[0] == shortPrefix:
		a = Approval{ApprovalID: parts[1], Decision: parts[2], Scope: parts[3]}
		if !events.ValidID(shortPrefix, a.ApprovalID) {
			return Approval{}, false
		}
	default:
		return Approval{}, false
	}
	ok := (a.Decision == decisionAllow || a.Decision == decisionDeny) &&
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
func approvalActions(msgID, runID, itemID, approvalID string, inSession bool) []Action {
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
		payload := ActionPayload(a)
		if approvalID != "" {
			payload = ShortPayload(approvalID, c.decision, c.scope)
		}
		out = append(out, Action{ID: actionID(msgID, c.decision, c.scope), Label: c.label, Payload: payload, Approval: &a})
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
