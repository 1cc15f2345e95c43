package executor

import (
	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
)

// decide decides command c on the run of state st. A session's commands (a
// message, intent auto; an interrupt) are decided on the session's head run,
// which may be another run of the partition than the one c names: the
// command returned is the one decided there, with its payload.
func (b *batch) decide(st *events.RunState, c commands.Envelope, payload any, opts commands.AdmitOptions) (commands.Envelope, any, commands.Decision) {
	var r commands.SessionRoute
	switch p := payload.(type) {
	case *commands.AppendUserInputPayload:
		if p.Intent != commands.IntentAuto {
			return c, payload, commands.Admit(st, c, payload, opts)
		}
		r = commands.AdmitSessionMessage(c, p, b.state, opts)
	case *commands.CancelRunPayload:
		if !p.Interrupt {
			return c, payload, commands.Admit(st, c, payload, opts)
		}
		r = commands.AdmitInterrupt(c, p, b.state, opts)
	default:
		return c, payload, commands.Admit(st, c, payload, opts)
	}
	return r.Command, r.Payload, r.Decision
}

// historyOf locates run runID and its session's earlier runs on the events
// topic (nil when the run is not live).
func (b *batch) historyOf(runID string) *commands.SessionHistory {
	if r, ok := b.w.runs[runID]; ok {
		return r.sessionRefs(b.w.eventsEnd)
	}
	return nil
}
