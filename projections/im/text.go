package im

import (
	"bytes"
	"encoding/json"

	"github.com/xbot-runtime/xbot/events"
)

// approvalText names what waits for a decision: the tool and its input, or
// the item type when the item is not a tool call.
func approvalText(p *events.ItemAwaitingApprovalPayload) string {
	what := p.ToolName
	if what == "" {
		what = string(p.ItemType)
	}
	text := "Approval needed: " + what
	if len(p.Input) > 0 {
		var buf bytes.Buffer
		if err := json.Compact(&buf, p.Input); err == nil {
			text += "\n" + buf.String()
		}
	}
	return text
}

// decisionText says how an approval was decided.
func decisionText(p *events.ApprovalDecisionPayload) string {
	text := "Denied"
	if p.Decision == decisionAllow {
		switch p.Scope {
		case scopeRun:
			text = "Allowed for this run"
		case scopeSession:
			text = "Allowed for this conversation"
		default:
			text = "Allowed"
		}
	}
	if p.Reason != "" {
		return text + ": " + p.Reason
	}
	return text + "."
}
