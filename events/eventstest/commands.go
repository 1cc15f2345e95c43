package eventstest

import "github.com/xbot-runtime/xbot/events"

// The runtime.command.* outcomes of command cmd.

// CommandAccepted records that cmd was admitted and waits for a safe point.
func (l *Log) CommandAccepted(cmd string, p events.CommandAcceptedPayload) *Log {
	l.tb.Helper()
	return l.Add(events.Draft{Type: events.CommandAccepted, CommandID: cmd, Payload: p})
}

// CommandApplied records that cmd took effect.
func (l *Log) CommandApplied(cmd string, p events.CommandAppliedPayload) *Log {
	l.tb.Helper()
	return l.Add(events.Draft{Type: events.CommandApplied, CommandID: cmd, Payload: p})
}

// CommandRejected records that cmd was refused.
func (l *Log) CommandRejected(cmd string, p events.CommandRejectedPayload) *Log {
	l.tb.Helper()
	return l.Add(events.Draft{Type: events.CommandRejected, CommandID: cmd, Payload: p})
}

// CommandNoEffect records that cmd changed nothing.
func (l *Log) CommandNoEffect(cmd string, p events.CommandNoEffectPayload) *Log {
	l.tb.Helper()
	return l.Add(events.Draft{Type: events.CommandNoEffect, CommandID: cmd, Payload: p})
}

// CommandDuplicate records that cmd repeated an idempotency key already
// used for the same request.
func (l *Log) CommandDuplicate(cmd string, p events.CommandDuplicatePayload) *Log {
	l.tb.Helper()
	return l.Add(events.Draft{Type: events.CommandDuplicate, CommandID: cmd, Payload: p})
}
