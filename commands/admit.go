package commands

import (
	"fmt"

	"github.com/xbot-runtime/xbot/events"
)

// Admit decides what a validated command does to a run in state st: its
// outcome and the events that record it. It is pure: the same inputs always
// give the same decision. payload is what Validate returned for c.
func Admit(st *events.RunState, c Envelope, payload any, opts AdmitOptions) Decision {
	// Another tenant learns nothing about a run, not even that a key was used.
	foreign := st.TenantID != "" && st.TenantID != c.TenantID
	if rec, ok := st.Commands[c.IdempotencyKey]; ok && !foreign {
		if rec.Fingerprint != "" && !SameRequest(rec.Fingerprint, c) {
			return reject(c, events.CodeIdempotencyKeyReused, "idempotency key %q was used by command %s for a different request",
				c.IdempotencyKey, rec.CommandID)
		}
		return duplicate(c, rec)
	}
	if c.Type != CreateRun && (!st.Exists() || foreign) {
		if r, ok := payload.(*RevokePermissionGrantPayload); ok && !st.Exists() {
			return r.beforeRun(c)
		}
		return reject(c, events.CodeRunNotFound, runMissing, c.RunID)
	}
	d, ok := payload.(decider)
	if !ok {
		return reject(c, events.CodeInternal, "no admission rule for command type %s", c.Type)
	}
	return d.decide(st, c, opts)
}

// duplicate answers a command whose idempotency key the run already knows
// from the same request.
func duplicate(c Envelope, orig events.CommandRecord) Decision {
	return Decision{Outcome: events.OutcomeDuplicate, Code: events.CodeDuplicateCommand, Original: &orig,
		Message: fmt.Sprintf("idempotency key already used by command %s (%s)", orig.CommandID, orig.Outcome),
		Events: []events.Draft{{Type: events.CommandDuplicate, CommandID: c.CommandID, Payload: events.CommandDuplicatePayload{
			CommandType: string(c.Type), IdempotencyKey: c.IdempotencyKey, OriginalCommandID: orig.CommandID,
			OriginalOutcome: orig.Outcome, OriginalCode: orig.Code, OriginalIntent: originalIntent(c, orig),
			CreatedRunID: orig.CreatedRunID, Actor: sender(c)}}}}
}

// originalIntent is what the session message a duplicate c repeats became:
// the session's first run when its original was a create.
func originalIntent(c Envelope, orig events.CommandRecord) string {
	switch {
	case c.Type != AppendUserInput:
		return ""
	case orig.Type == string(CreateRun):
		return IntentFollowUp
	}
	return orig.Intent
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
