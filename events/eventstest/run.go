package eventstest

import "github.com/xbot-runtime/xbot/events"

// Accepted records the run's acceptance: runtime.run.accepted of the
// CreateRun (or follow-up) command cmd.
func (l *Log) Accepted(cmd string, p events.RunAcceptedPayload) *Log {
	l.tb.Helper()
	return l.Add(events.Draft{Type: events.RunAccepted, CommandID: cmd, Payload: p})
}

// Started records that executor executorID (may be empty) started the run.
func (l *Log) Started(executorID string) *Log {
	l.tb.Helper()
	return l.Add(events.Draft{Type: events.RunStarted, Payload: events.RunStartedPayload{ExecutorID: executorID}})
}

// Paused pauses the run for reason, waiting for items (may be none).
func (l *Log) Paused(reason events.PauseReason, items ...string) *Log {
	l.tb.Helper()
	return l.Add(events.Draft{Type: events.RunPaused, Payload: events.RunPausedPayload{PauseReason: reason, ItemIDs: items}})
}

// Resumed resumes the paused run; cmd names the command that resumed it
// (empty for none). Like the executor's, the event has no payload.
func (l *Log) Resumed(cmd string) *Log {
	l.tb.Helper()
	return l.Add(events.Draft{Type: events.RunResumed, CommandID: cmd})
}

// Queued records the run's place in its sandbox key's queue (cmd: the
// command that resumed it while another run held the key; empty for none).
func (l *Log) Queued(cmd string, position int) *Log {
	l.tb.Helper()
	return l.Add(events.Draft{Type: events.RunQueued, CommandID: cmd, Payload: events.RunQueuedPayload{Position: position}})
}

// Completed ends the run with output.
func (l *Log) Completed(output string) *Log {
	l.tb.Helper()
	return l.Add(events.Draft{Type: events.RunCompleted, Payload: events.RunCompletedPayload{Output: output}})
}

// Failed ends the run with failure code (events.Fail…) and message.
func (l *Log) Failed(code, message string) *Log {
	l.tb.Helper()
	return l.Add(events.Draft{Type: events.RunFailed, Payload: events.RunFailedPayload{ErrorCode: code, Message: message}})
}

// Cancelled ends the run as cancelled by command cmd (empty for none).
func (l *Log) Cancelled(cmd, reason string) *Log {
	l.tb.Helper()
	return l.Add(events.Draft{Type: events.RunCancelled, CommandID: cmd, Payload: events.RunCancelledPayload{Reason: reason}})
}

// ExpiredMessage is the message of an item that still awaited an answer
// when its run's pause expired.
const ExpiredMessage = "nobody answered before the run's pause expired"

// Expire ends a run paused with a pause TTL when the TTL runs out, as the
// executor does: at the pause's deadline every open item (an approval or a
// question nobody answered) fails as expired, then the run expires. Pending
// commands are left to the caller. It fails the test if the run is not
// paused with a TTL.
func (l *Log) Expire() *Log {
	l.tb.Helper()
	deadline, ok := l.state.PauseDeadline()
	if !ok {
		l.tb.Fatalf("run %s is not paused with a pause TTL", l.id.RunID)
	}
	l.now = deadline
	l.Add(events.FailOpenItems(l.state, events.ToolErrExpired, ExpiredMessage)...)
	return l.Add(events.Draft{Type: events.RunExpired, Payload: events.RunExpiredPayload{
		PauseReason: l.state.PauseReason, PausedAt: l.state.PausedAt, PauseTTLMs: l.state.PauseTTLMs}})
}

// Compacted records a context compaction of everything so far: p's
// CutoffEventSeq and SourceRange are set to the log's last seq.
func (l *Log) Compacted(p events.ContextCompactedPayload) *Log {
	l.tb.Helper()
	p.CutoffEventSeq = l.state.LastSeq
	p.SourceRange = events.SeqRange{FromSeq: 1, ToSeq: l.state.LastSeq}
	return l.Add(events.Draft{Type: events.ContextCompacted, Payload: p})
}
