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
