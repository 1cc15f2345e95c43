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
func (p *CancelRunPayload) decide(st *events.RunState, c Envelope, opts AdmitOptions) Decision {
	switch {
	case st.Status.Terminal():
		return noEffect(c, fmt.Sprintf("run is already %s", st.Status))
	case st.Status == events.StatusQueued, st.Status == events.StatusPaused:
		if p.Interrupt {
			drafts, send := InterruptEvents(*st, Pending(c), nil, opts.Partitions, opts.Now)
			return Decision{Outcome: events.OutcomeApplied, Events: drafts, Send: send}
		}
		return Decision{Outcome: events.OutcomeApplied, Events: CancelEvents(*st, Pending(c), nil)}
	case HasPending(*st, CancelRun):
		return noEffect(c, "a cancel is already pending")
	}
	return accept(c, EffectInterrupt)
}

// PendingCancel returns the cancel that waits in st for a safe point.
func PendingCancel(st events.RunState) (events.PendingCommand, bool) {
	for _, p := range st.Pending {
		if p.Type == string(CancelRun) {
			return p, true
		}
	}
	return events.PendingCommand{}, false
}

// CancelEvents record cancel p ending the run in state st, at a safe point
// or at rest: first unstarted (the tool calls the model requested that have
// no item yet, recorded as cancelled items so the run's history stays a
// valid provider conversation), then every open item fails as cancelled,
// the cancel applies and the run is cancelled. Other commands still pending
// are closed as no_effect, so none is dropped silently.
func CancelEvents(st events.RunState, p events.PendingCommand, unstarted []events.Draft) []events.Draft {
	var payload CancelRunPayload
	if len(p.Command) > 0 {
		_ = json.Unmarshal(p.Command, &payload) // validated at admission; a zero reason is fine
	}
	drafts := append(append([]events.Draft(nil), unstarted...),
		events.FailOpenItems(st, events.ToolErrCancelled, "the run was cancelled")...)
	drafts = append(drafts, AppliedEvent(p, ""),
		events.Draft{Type: events.RunCancelled, CommandID: p.CommandID, Payload: events.RunCancelledPayload{Reason: payload.Reason}})
	for _, q := range st.Pending {
		if q.CommandID != p.CommandID {
			drafts = append(drafts, NoEffectEvent(q, "the run was cancelled before the command could apply"))
		}
	}
	return drafts
}
