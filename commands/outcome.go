package commands

import "github.com/xbot-runtime/xbot/events"

// The runtime.command.* outcome events name who sent the command: outcomes
// recorded at admission take the actor from the command's envelope, outcomes
// recorded later (at a safe point, or when the run ends first) from the
// pending command, which the fold copied from the command's
// runtime.command.accepted.

// Pending is command c as the run remembers it while it waits for a safe
// point.
func Pending(c Envelope) events.PendingCommand {
	return events.PendingCommand{CommandID: c.CommandID, Type: string(c.Type), IdempotencyKey: c.IdempotencyKey,
		Command: c.Payload, Actor: sender(c), Fingerprint: Fingerprint(c)}
}

// AppliedEvent records that command p took effect; createdRunID names the
// run it created, if any.
func AppliedEvent(p events.PendingCommand, createdRunID string) events.Draft {
	return events.Draft{Type: events.CommandApplied, CommandID: p.CommandID, Payload: events.CommandAppliedPayload{
		CommandType: p.Type, IdempotencyKey: p.IdempotencyKey, CreatedRunID: createdRunID, Intent: appliedIntent(p.Intent),
		Actor: p.Actor, Fingerprint: p.Fingerprint}}
}

// appliedIntent is what a session message pending as intent is once applied:
// a queued one is applied as a steer.
func appliedIntent(intent string) string {
	if intent == IntentQueued {
		return IntentSteer
	}
	return intent
}

// NoEffectEvent closes command p without effect, for reason.
func NoEffectEvent(p events.PendingCommand, reason string) events.Draft {
	return events.Draft{Type: events.CommandNoEffect, CommandID: p.CommandID, Payload: events.CommandNoEffectPayload{
		CommandType: p.Type, IdempotencyKey: p.IdempotencyKey, Reason: reason, Actor: p.Actor,
		Fingerprint: p.Fingerprint}}
}

// RejectedEvent records that command c was refused with code. A command
// refused because its key was used for another request does not own the
// key, so it keeps no fingerprint of its own.
func RejectedEvent(c Envelope, code events.Code, msg string) events.Draft {
	return rejectedDraft(c, rejection(c, code, msg))
}

// rejection is the payload of RejectedEvent.
func rejection(c Envelope, code events.Code, msg string) events.CommandRejectedPayload {
	p := events.CommandRejectedPayload{CommandType: string(c.Type), IdempotencyKey: c.IdempotencyKey, Code: code,
		Message: msg, Actor: sender(c)}
	if code != events.CodeIdempotencyKeyReused {
		p.Fingerprint = Fingerprint(c)
	}
	return p
}

func rejectedDraft(c Envelope, p events.CommandRejectedPayload) events.Draft {
	return events.Draft{Type: events.CommandRejected, CommandID: c.CommandID, Payload: p}
}

// sender is the actor of c as its outcome events name it: nil when c has none.
func sender(c Envelope) *events.Actor {
	if c.Actor == (events.Actor{}) {
		return nil
	}
	a := c.Actor
	return &a
}
