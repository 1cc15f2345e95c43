package commands

import (
	"fmt"

	"github.com/xbot-runtime/xbot/events"
)

// Decision is the result of admission: the outcome of a command given the
// run's current state, the events that record it, and what else the
// executor must do once those events commit.
type Decision struct {
	// Outcome is accepted (run created, or buffered for a safe point), applied
	// (took effect at once), rejected, duplicate or no_effect.
	Outcome events.Outcome
	// Code and Message explain a rejection.
	Code    events.Code
	Message string
	// Original is the first command with the same idempotency key (duplicate).
	Original *events.CommandRecord
	// Events are the events to append to the run, in order, all or none.
	Events []events.Draft
	// Send are the commands to produce in the same transaction (a
	// follow-up's CreateRun of the session's next run).
	Send []Envelope
	// Then is what the executor does once the events commit.
	Then Effect
}

// Effect is what the executor does after a decision's events commit.
type Effect int

// Effects.
const (
	// EffectNone: nothing beyond the events.
	EffectNone Effect = iota
	// EffectEnqueue: a new run waits for its sandbox key to be free.
	EffectEnqueue
	// EffectInterrupt: a cancel is pending; the run's current step stops.
	EffectInterrupt
	// EffectWake: the run's engine (re)starts, to apply the command that
	// resumes a paused run or to run what the command resumed.
	EffectWake
)

// AdmitOptions carries what admission needs to know beyond the run's state.
type AdmitOptions struct {
	// History returns where the commanded run and its session's earlier
	// runs are on the events topic (nil: not known), for the create a
	// follow-up sends. Nil gives follow-ups no history.
	History func() *SessionHistory
	// HistoryOf is History for any run of the partition: a session message
	// follows up on the session's head, which need not be the run it named.
	// Nil gives such follow-ups History's answer.
	HistoryOf func(runID string) *SessionHistory
	// KnownAgent reports whether an agent profile exists. Required for CreateRun.
	KnownAgent func(agentID string) bool
	// Implemented reports whether the executor's engine can honour a command
	// type or intent (e.g. "AppendUserInput/steer"). Nil means nothing beyond
	// CreateRun and CancelRun.
	Implemented func(what string) bool
	// Partitions is the partition count of the commands topic. A CreateRun
	// whose runId is not on its sandbox key's partition is rejected
	// (sandbox_key_misrouted), because the key's runs must share a
	// partition to run one at a time. <= 1 checks nothing.
	Partitions int
	// Now is the time (Unix ms) stamped on the commands a decision sends.
	Now int64
}

// decider is implemented by every command payload: it decides what the
// command does to a run that exists (or, for CreateRun, may not), once the
// rules common to every command (duplicates, unknown runs) have passed.
type decider interface {
	decide(st *events.RunState, c Envelope, opts AdmitOptions) Decision
}

func reject(c Envelope, code events.Code, format string, args ...any) Decision {
	return refused(c, rejection(c, code, fmt.Sprintf(format, args...)))
}

// refused is the decision that refuses c as p says.
func refused(c Envelope, p events.CommandRejectedPayload) Decision {
	return Decision{Outcome: events.OutcomeRejected, Code: p.Code, Message: p.Message, Events: []events.Draft{rejectedDraft(c, p)}}
}

// runMissing is the message of a command refused run_not_found.
const runMissing = "run %s does not exist"

func accept(c Envelope, then Effect) Decision {
	return Decision{Outcome: events.OutcomeAccepted, Then: then, Events: []events.Draft{{Type: events.CommandAccepted,
		CommandID: c.CommandID, Payload: events.CommandAcceptedPayload{CommandType: string(c.Type),
			IdempotencyKey: c.IdempotencyKey, Command: c.Payload, Actor: sender(c), Fingerprint: Fingerprint(c)}}}}
}

func noEffect(c Envelope, reason string) Decision {
	return Decision{Outcome: events.OutcomeNoEffect, Message: reason, Events: []events.Draft{NoEffectEvent(Pending(c), reason)}}
}

// acceptIfImplemented accepts c when the engine honours what, and rejects
// it not_implemented otherwise.
func acceptIfImplemented(c Envelope, what string, opts AdmitOptions, then Effect) Decision {
	if !implemented(what, opts) {
		return unsupported(c, what)
	}
	return accept(c, then)
}

// unsupported rejects c because this executor's engine does not declare what
// (Engine.Implements): an executor older than the command, during a rolling
// upgrade, answers with a code instead of mishandling it.
func unsupported(c Envelope, what string) Decision {
	return reject(c, events.CodeNotImplemented, "%s is not supported by this executor's engine", what)
}

func implemented(what string, opts AdmitOptions) bool {
	return opts.Implemented != nil && opts.Implemented(what)
}

// wakeIfPaused is the effect of accepting a command on a run in st: a
// paused run's engine starts to apply it; a running one meets it at its
// next safe point.
func wakeIfPaused(st *events.RunState) Effect {
	if st.Status == events.StatusPaused {
		return EffectWake
	}
	return EffectNone
}

func describe(st *events.RunState) string {
	if st.Status == events.StatusPaused {
		return fmt.Sprintf("paused (%s)", st.PauseReason)
	}
	return string(st.CurrentStatus())
}
