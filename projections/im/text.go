package im

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/xbot-runtime/xbot/events"
)

// maxInputChars bounds the arguments an approval request shows: enough for
// a command line or a path and a short patch, short enough for a chat
// bubble. The whole call is in the run's items.
const maxInputChars = 400

// approvalText names what waits for a decision: the tool and its input
// (shortened), or the item type when the item is not a tool call, then why
// the policy asks.
func approvalText(p *events.ItemAwaitingApprovalPayload) string {
	what := p.ToolName
	if what == "" {
		what = string(p.ItemType)
	}
	text := "Approval needed: " + what
	if len(p.Input) > 0 {
		var buf bytes.Buffer
		if err := json.Compact(&buf, p.Input); err == nil {
			text += "\n" + shorten(buf.String(), maxInputChars)
		}
	}
	switch {
	case p.Reason != "" && p.RuleID != "":
		text += "\nReason: " + p.Reason + " (rule " + p.RuleID + ")"
	case p.Reason != "":
		text += "\nReason: " + p.Reason
	case p.RuleID != "":
		text += "\nRule: " + p.RuleID
	}
	return text
}

// shorten cuts s to at most n characters, marking the cut with "…".
func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// decisionText says how an approval was decided and by whom.
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
	who := p.Actor.ID
	if who == "" {
		who = "someone"
	}
	if p.GrantID != "" { // the reason is the runtime's, not the person's
		return text + " by " + who + "'s grant for the same tool and rule."
	}
	text += " by " + who
	if p.Reason != "" {
		return text + ": " + p.Reason
	}
	return text + "."
}

// expiredText says that nobody answered within the pause TTL.
func expiredText(p *events.RunExpiredPayload) string {
	text := "The run expired"
	switch p.PauseReason {
	case events.PauseAwaitingApproval:
		text += ": nobody decided on the approval request"
	case events.PauseAwaitingUserInput:
		text += ": nobody answered the question"
	case events.PauseAwaitingExternalToolResult, events.PauseAwaitingCheckpointRestore:
		text += " while paused"
	}
	if p.PauseTTLMs > 0 {
		text += " within " + shortDuration(time.Duration(p.PauseTTLMs)*time.Millisecond)
	}
	return text + "."
}

// shortDuration writes d like time.Duration.String without zero units:
// 24h, 1h30m, 45m, 30s.
func shortDuration(d time.Duration) string {
	s := d.Round(time.Second).String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
