package commands

import (
	"fmt"

	"github.com/xbot-runtime/xbot/events"
)

// Decision is the result of admission: what the executor must record for a
// command given the run's current state.
type Decision struct {
	// Outcome is accepted (run created, or buffered for a safe point), applied
	// (took effect at once), rejected, duplicate or no_effect.
	Outcome Outcome
	// Code and Message explain a rejection.
	Code    Code
	Message string
	// Original is the first command with the same idempotency key (duplicate).
	Original *events.CommandRecord
}

// AdmitOptions carries what admission needs to know beyond the run's state.
type AdmitOptions struct {
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
}

// Admit decides what a validated command does to a run in state st. It is
// pure: the same inputs always give the same decision.
func Admit(st *events.RunState, c Envelope, payload any, opts AdmitOptions) Decision {
	// Another tenant learns nothing about a run, not even that a key was used.
	foreign := st.TenantID != "" && st.TenantID != c.TenantID
	if rec, ok := st.Commands[c.IdempotencyKey]; ok && !foreign {
		if rec.Fingerprint != "" && rec.Fingerprint != Fingerprint(c) {
			return reject(CodeIdempotencyKeyReused, "idempotency key %q was used by command %s for a different request",
				c.IdempotencyKey, rec.CommandID)
		}
		r := rec
		return Decision{Outcome: OutcomeDuplicate, Code: CodeDuplicateCommand, Original: &r,
			Message: fmt.Sprintf("idempotency key already used by command %s (%s)", rec.CommandID, rec.Outcome)}
	}
	if c.Type != CreateRun && (!st.Exists() || foreign) {
		return reject(CodeRunNotFound, "run %s does not exist", c.RunID)
	}
	switch p := payload.(type) {
	case *CreateRunPayload:
		return admitCreate(st, c, p, opts)
	case *CancelRunPayload:
		return admitCancel(st)
	case *AppendUserInputPayload:
		return admitInput(st, p, opts)
	case *SubmitApprovalDecisionPayload:
		return admitApproval(st, p, opts)
	case *RequestCompactionPayload:
		if !st.Status.Active() || st.Status == events.StatusQueued {
			return reject(CodeInvalidState, "compaction needs a running or paused run; run is %s", st.CurrentStatus())
		}
		return acceptIfImplemented(string(RequestCompaction), opts)
	}
	return reject(CodeInternal, "no admission rule for command type %s", c.Type)
}

func reject(code Code, format string, args ...any) Decision {
	return Decision{Outcome: OutcomeRejected, Code: code, Message: fmt.Sprintf(format, args...)}
}

func admitCreate(st *events.RunState, c Envelope, p *CreateRunPayload, opts AdmitOptions) Decision {
	if opts.KnownAgent == nil {
		panic("commands.Admit: AdmitOptions.KnownAgent is required") // wiring bug
	}
	if st.Exists() {
		return reject(CodeRunAlreadyExists, "run %s already exists", c.RunID)
	}
	if !opts.KnownAgent(p.AgentID) {
		return reject(CodeUnknownAgent, "agent %q is not configured", p.AgentID)
	}
	if !Routed(c.RunID, p.SandboxKey, opts.Partitions) {
		return reject(CodeSandboxKeyMisrouted, "runId %s is not on partition %d of its sandbox key; derive it with commands.RunIDFor",
			c.RunID, SandboxPartition(p.SandboxKey, opts.Partitions))
	}
	return Decision{Outcome: OutcomeAccepted}
}

func admitCancel(st *events.RunState) Decision {
	switch {
	case st.Status.Terminal():
		return Decision{Outcome: OutcomeNoEffect, Message: fmt.Sprintf("run is already %s", st.Status)}
	case st.Status == events.StatusQueued, st.Status == events.StatusPaused:
		// Nothing is executing: a queued or paused run is at rest, which is
		// itself a safe point, so the cancel applies at once.
		return Decision{Outcome: OutcomeApplied}
	case HasPending(*st, CancelRun):
		return Decision{Outcome: OutcomeNoEffect, Message: "a cancel is already pending"}
	}
	return Decision{Outcome: OutcomeAccepted}
}

// HasPending reports whether a command of type t waits in st for a safe point.
func HasPending(st events.RunState, t Type) bool {
	for _, p := range st.Pending {
		if p.Type == string(t) {
			return true
		}
	}
	return false
}

func admitInput(st *events.RunState, p *AppendUserInputPayload, opts AdmitOptions) Decision {
	var ok bool
	switch p.Intent {
	case IntentSteer:
		ok = st.Status == events.StatusRunning
	case IntentClarification:
		ok = st.Status == events.StatusPaused && st.PauseReason == events.PauseAwaitingUserInput
	case IntentFollowUp:
		ok = st.Status.Terminal()
	}
	if !ok {
		return reject(CodeInvalidState, "intent %s is not valid while the run is %s", p.Intent, describe(st))
	}
	d := acceptIfImplemented(string(AppendUserInput)+"/"+p.Intent, opts)
	if p.Intent == IntentFollowUp && d.Outcome == OutcomeAccepted {
		// A follow-up never reopens the finished run: it takes effect at once
		// by creating the next run of the session, and the finished run only
		// records that it was applied.
		d.Outcome = OutcomeApplied
	}
	return d
}

// admitApproval decides a SubmitApprovalDecision. A paused run is at rest,
// which is itself a safe point, so a valid decision applies at once: it
// resolves that item only, and the run resumes when no item awaits any
// more. Deciding at admission also makes a second decision for the same
// item impossible: the item no longer awaits when the next command is
// admitted.
func admitApproval(st *events.RunState, p *SubmitApprovalDecisionPayload, opts AdmitOptions) Decision {
	if st.Status != events.StatusPaused || st.PauseReason != events.PauseAwaitingApproval {
		return reject(CodeInvalidState, "no approval is pending while the run is %s", describe(st))
	}
	it, ok := st.Item(p.ItemID)
	switch {
	case !ok:
		return reject(CodeApprovalNotPending, "run %s has no item %s", st.RunID, p.ItemID)
	case it.Status != events.ItemStatusAwaitingApproval:
		return reject(CodeApprovalNotPending, "item %s does not await approval (it is %s)", p.ItemID, it.Status)
	}
	d := acceptIfImplemented(string(SubmitApprovalDecision), opts)
	if d.Outcome == OutcomeAccepted {
		d.Outcome = OutcomeApplied
	}
	return d
}

func acceptIfImplemented(what string, opts AdmitOptions) Decision {
	if opts.Implemented == nil || !opts.Implemented(what) {
		return reject(CodeNotImplemented, "%s is not implemented by this executor yet", what)
	}
	return Decision{Outcome: OutcomeAccepted}
}

func describe(st *events.RunState) string {
	if st.Status == events.StatusPaused {
		return fmt.Sprintf("paused (%s)", st.PauseReason)
	}
	return string(st.CurrentStatus())
}
