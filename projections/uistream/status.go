package uistream

import "github.com/xbot-runtime/xbot/events"

// Status is the data of a data-status part: the runtime client contract's
// StatusChanged, for the run RunID. Status is working while the run runs,
// waiting while it waits (Reason: "queued" for its sandbox key, or the
// pause's pauseReason, e.g. awaiting_approval) and idle once it ended.
//
// The part is transient (the SDK hands it to onData and keeps it out of the
// message) and is sent only when the status changes, as the last chunk of the
// lifecycle event that changed it, even while the message is closed: after a
// pause's finish, after the reply's final finish or abort. Being mapped from
// the run's events alone, it is the same live, backfilled and resumed.
type Status struct {
	Status string `json:"status"`
	RunID  string `json:"runId"`
	Reason string `json:"reason,omitempty"`
}

// The values of Status.Status.
const (
	StatusWorking = "working"
	StatusWaiting = "waiting"
	StatusIdle    = "idle"
)

// ReasonQueued is Status.Reason of a run waiting for its sandbox key.
const ReasonQueued = "queued"

// StatusOf is the status of a run in state s (pause: its pauseReason while
// paused); ok is false for a run that has no status yet (not accepted).
func StatusOf(runID string, s events.Status, pause events.PauseReason) (st Status, ok bool) {
	st.RunID = runID
	switch {
	case s.Terminal():
		st.Status = StatusIdle
	case s == events.StatusRunning:
		st.Status = StatusWorking
	case s == events.StatusQueued:
		st.Status, st.Reason = StatusWaiting, ReasonQueued
	case s == events.StatusPaused:
		st.Status, st.Reason = StatusWaiting, string(pause)
	default:
		return st, false
	}
	return st, true
}

// statusChanged sends a data-status part when lifecycle event e (payload p)
// changed the run's status. It bypasses emit: the part is not held while the
// message is paused nor dropped once the reply ended.
func (m *Mapper) statusChanged(e events.Envelope, p any) {
	to, ok := events.StatusAfter(e.Type)
	if !ok {
		return
	}
	var pause events.PauseReason
	if v, isPause := p.(*events.RunPausedPayload); isPause {
		pause = v.PauseReason
	}
	st, ok := StatusOf(m.runID, to, pause)
	if !ok || st == m.status {
		return
	}
	m.status = st
	m.out = append(m.out, dataChunk("status", "", st, true))
}
