package commands

import (
	"encoding/json"
	"fmt"

	"github.com/xbot-runtime/xbot/events"
)

// decide admits a CancelRun. A queued or paused run is at rest, which is
// itself a safe point, so the cancel applies at once: its open items close
// as cancelled. A running run meets it at its next safe point, and its
// current step is interrupted.
func (p *CancelRunPayload) decide(st *events.RunState, c Envelope, _ AdmitOptions) Decision {
	switch {
	case st.Status.Terminal():
		return noEffect(c, fmt.Sprintf("run is already %s", st.Status))
	case st.Status == events.StatusQueued, st.Status == events.StatusPaused:
		drafts := events.FailOpenItems(*st, events.ToolErrCancelled, "the run was cancelled")
		return Decision{Outcome: events.OutcomeApplied, Events: append(drafts, CancelEvents(*st, Pending(c))...)}
	case HasPending(*st, CancelRun):
		return noEffect(c, "a cancel is already pending")
	}
	return accept(c, EffectInterrupt)
}

// CancelEvents records cancel p taking effect on a run in state st (whose
// open items are already closed). Other commands still pending are closed
// as no_effect, so none is dropped silently.
func CancelEvents(st events.RunState, p events.PendingCommand) []events.Draft {
	var payload CancelRunPayload
	if len(p.Command) > 0 {
		_ = json.Unmarshal(p.Command, &payload) // validated at admission; a zero reason is fine
	}
	drafts := []events.Draft{
		AppliedEvent(p, ""),
		{Type: events.RunCancelled, CommandID: p.CommandID, Payload: events.RunCancelledPayload{Reason: payload.Reason}},
	}
	for _, q := range st.Pending {
		if q.CommandID != p.CommandID {
			drafts = append(drafts, NoEffectEvent(q, "the run was cancelled before the command could apply"))
		}
	}
	return drafts
}
