package commands

import "github.com/xbot-runtime/xbot/events"

// decide admits a RequestCompaction: a running or paused run buffers it for
// its next before_model_request.
func (p *RequestCompactionPayload) decide(st *events.RunState, c Envelope, opts AdmitOptions) Decision {
	if !st.Status.Active() || st.Status == events.StatusQueued {
		return reject(c, events.CodeInvalidState, "compaction needs a running or paused run; run is %s", st.CurrentStatus())
	}
	return acceptIfImplemented(c, string(RequestCompaction), opts, wakeIfPaused(st))
}

// PendingCompaction returns the oldest RequestCompaction waiting in st for
// the next before_model_request.
func PendingCompaction(st events.RunState) (events.PendingCommand, bool) {
	for _, p := range st.Pending {
		if p.Type == string(RequestCompaction) {
			return p, true
		}
	}
	return events.PendingCommand{}, false
}

// UnneededCompactions close every RequestCompaction pending in st as
// no_effect: the run is finishing, there is nothing left to compact.
func UnneededCompactions(st events.RunState) []events.Draft {
	var drafts []events.Draft
	for _, p := range st.Pending {
		if p.Type == string(RequestCompaction) {
			drafts = append(drafts, NoEffectEvent(p, "the run finished before its context needed compacting"))
		}
	}
	return drafts
}

// CompactionEvents record compaction artifact art. With a pending
// RequestCompaction (manual), the artifact carries its commandId and the
// command applies with it; a failed compaction (art == nil) closes it as
// no_effect with reason.
func CompactionEvents(art *events.ContextCompactedPayload, manual *events.PendingCommand, reason string) []events.Draft {
	var drafts []events.Draft
	if art != nil {
		d := events.Draft{Type: events.ContextCompacted, Payload: *art}
		if manual != nil {
			d.CommandID = manual.CommandID
		}
		drafts = append(drafts, d)
	}
	switch {
	case manual == nil:
	case art != nil:
		drafts = append(drafts, AppliedEvent(*manual, ""))
	default:
		drafts = append(drafts, NoEffectEvent(*manual, reason))
	}
	return drafts
}
