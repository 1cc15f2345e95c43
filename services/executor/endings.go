package executor

import (
	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
)

// The events by which a run ends without a command: its engine failed, or
// its pause outlived its TTL. Pending commands are closed as no_effect, so
// none is dropped silently.

// failDrafts ends the run as failed with code: open items fail with the same
// code.
func failDrafts(st events.RunState, code, msg string) []events.Draft {
	drafts := events.FailOpenItems(st, code, msg)
	drafts = append(drafts, events.Draft{Type: events.RunFailed, Payload: events.RunFailedPayload{ErrorCode: code, Message: msg}})
	for _, p := range st.Pending {
		drafts = append(drafts, commands.NoEffectEvent(p, "the run failed before the command could apply"))
	}
	return drafts
}

// expireDrafts ends a paused run whose pause outlived its TTL: open items
// (approvals and questions nobody answered) fail as expired, the run
// expires, and pending commands are closed as no_effect.
func expireDrafts(st events.RunState) []events.Draft {
	drafts := events.FailOpenItems(st, events.ToolErrExpired, "nobody answered before the run's pause expired")
	drafts = append(drafts, events.Draft{Type: events.RunExpired, Payload: events.RunExpiredPayload{
		PauseReason: st.PauseReason, PausedAt: st.PausedAt, PauseTTLMs: st.PauseTTLMs}})
	for _, p := range st.Pending {
		drafts = append(drafts, commands.NoEffectEvent(p, "the run expired before the command could apply"))
	}
	return drafts
}
