package commands

import (
	"encoding/json"
	"fmt"

	"github.com/xbot-runtime/xbot/events"
)

// maxSessionHops bounds the walk from a session message's target run to the
// session's head: a session whose runs are chained further than this (by
// follow-ups sent while the message was in flight) is not plausible, and a
// bound keeps a corrupt chain from looping.
const maxSessionHops = 64

// SessionRoute is where a session message (AppendUserInput, intent auto)
// lands and what it does there.
type SessionRoute struct {
	// Command is what is admitted on the head run (Command.RunID): the
	// message itself, or the CreateRun it becomes as the session's first run.
	Command Envelope
	// Payload is Command's decoded payload.
	Payload any
	// Decision is its outcome. A message sent again behind its head's
	// CreateRun (Resend) has no events: it is decided when it comes back.
	Decision Decision
	// Resend says the head run is not admitted yet; Decision.Send holds the
	// message again, marked as behind the head's create.
	Resend bool
}

// AdmitSessionMessage decides session message c: it walks from the run c
// names to the session's head on the same partition (a finished run that has
// a next run forwards to it), and decides by the head's state. Every run the
// walk passes is asked for c's idempotency key, so a retry is a duplicate of
// the first attempt wherever that landed. state returns a run's state (the
// zero state for a run that does not exist); AdmitSessionMessage reads it
// only. The routing table is in docs/sessions.md.
func AdmitSessionMessage(c Envelope, p *AppendUserInputPayload, state func(runID string) *events.RunState, opts AdmitOptions) SessionRoute {
	id, prev := sessionHead(c, state)
	return routeTo(c, p, id, prev, state, opts)
}

// sessionHead walks from the run c names to the session's head: the first
// run that knows c's idempotency key, is not finished, or has no next run.
// prev is the run before it (nil when the head is the run c names).
func sessionHead(c Envelope, state func(runID string) *events.RunState) (id string, prev *events.RunState) {
	id = c.RunID
	for hop := 0; ; hop++ {
		st := state(id)
		if _, seen := st.Commands[c.IdempotencyKey]; seen || hop == maxSessionHops ||
			!st.Status.Terminal() || st.NextRunID == "" || st.TenantID != c.TenantID {
			return id, prev
		}
		prev, id = st, st.NextRunID
	}
}

// routeTo decides c on run id, the session's head; prev is the run that
// named it as its next run (nil for the run the message named).
func routeTo(c Envelope, p *AppendUserInputPayload, id string, prev *events.RunState, state func(string) *events.RunState, opts AdmitOptions) SessionRoute {
	st := state(id)
	at := c
	at.RunID = id
	_, seen := st.Commands[c.IdempotencyKey]
	switch {
	case st.Exists() || seen:
		return SessionRoute{Command: at, Payload: p, Decision: Admit(st, at, p, opts)}
	case prev == nil:
		return firstRun(st, c, p, opts)
	case p.Behind == id:
		// It came back behind the create and the run is still not there:
		// the create was refused. The run before it has no next run then.
		back := c
		back.RunID = prev.RunID
		return SessionRoute{Command: back, Payload: p, Decision: decideAuto(prev, back, p, opts)}
	}
	// Sent again as it came, to the run it names: the walk goes the same
	// way once the create is admitted (or refused), which on this
	// partition is before the message comes back.
	again := *p
	again.Behind = id
	env, err := withPayload(c, &again)
	if err != nil {
		return SessionRoute{Command: at, Payload: p, Decision: reject(c, events.CodeInternal, "internal error during admission")}
	}
	return SessionRoute{Command: at, Payload: p, Resend: true, Decision: Decision{Outcome: events.OutcomeAccepted, Send: []Envelope{env}}}
}

// firstRun makes c the CreateRun of the session's first run, c.RunID (the
// API derives it from the tenant, the session and the sandbox key). The
// run's records keep c's idempotency key and fingerprint, so a retry of the
// message is a duplicate of it.
func firstRun(st *events.RunState, c Envelope, p *AppendUserInputPayload, opts AdmitOptions) SessionRoute {
	switch {
	case p.AgentID == "" || p.SandboxKey == nil:
		return SessionRoute{Command: c, Payload: p,
			Decision: reject(c, events.CodeRunNotFound, "the session has no run yet; its first message needs agentId")}
	case c.RunID != FirstSessionRunID(c.TenantID, c.PlatformSessionID, *p.SandboxKey, opts.Partitions):
		// A run the executor does not know (never, or no longer: it was
		// forgotten) is never created under a message's name.
		return SessionRoute{Command: c, Payload: p, Decision: reject(c, events.CodeRunNotFound, runMissing, c.RunID)}
	}
	create := &CreateRunPayload{AgentID: p.AgentID, Input: events.UserInput{Content: p.Content},
		SandboxKey: *p.SandboxKey, Options: p.Options}
	env, err := withPayload(c, create)
	if err != nil {
		return SessionRoute{Command: c, Payload: p, Decision: reject(c, events.CodeInternal, "internal error during admission")}
	}
	env.Type = CreateRun
	d := create.decide(st, env, opts)
	for i, e := range d.Events {
		switch v := e.Payload.(type) {
		case events.RunAcceptedPayload:
			v.Fingerprint = Fingerprint(c)
			d.Events[i].Payload = v
		case events.CommandRejectedPayload:
			v.CommandType, v.Fingerprint = string(c.Type), Fingerprint(c)
			d.Events[i].Payload = v
		}
	}
	return SessionRoute{Command: env, Payload: create, Decision: d}
}

// decideAuto admits session message c on run st, the session's head, by the
// run's state: a finished run gets its next run (a follow-up); a running or
// queued one a steer; one paused on a question the answer; one paused on
// anything else (an approval) keeps it pending as queued, a steer once it
// resumes. None of these is invalid_state.
func decideAuto(st *events.RunState, c Envelope, p *AppendUserInputPayload, opts AdmitOptions) Decision {
	switch {
	case st.Status.Terminal():
		if !implemented(string(AppendUserInput)+"/"+IntentFollowUp, opts) {
			return unsupported(c, string(AppendUserInput)+"/"+IntentFollowUp)
		}
		f := *p
		f.Intent = IntentFollowUp
		if opts.HistoryOf != nil {
			opts.History = func() *SessionHistory { return opts.HistoryOf(st.RunID) }
		}
		d := followUp(st, c, &f, opts)
		if len(d.Events) == 1 {
			if v, ok := d.Events[0].Payload.(events.CommandAppliedPayload); ok {
				v.Intent = IntentFollowUp
				d.Events[0].Payload = v
			}
		}
		return d
	case st.Status == events.StatusPaused && st.PauseReason == events.PauseAwaitingUserInput:
		return acceptAs(c, IntentClarification, opts, EffectWake)
	case st.Status == events.StatusPaused:
		return acceptAs(c, IntentQueued, opts, EffectNone)
	}
	return acceptAs(c, IntentSteer, opts, EffectNone)
}

// acceptAs accepts session message c as intent, when the engine honours it.
func acceptAs(c Envelope, intent string, opts AdmitOptions, then Effect) Decision {
	what := string(AppendUserInput) + "/" + appliedIntent(intent)
	if !implemented(what, opts) {
		return unsupported(c, what)
	}
	d := accept(c, then)
	v := d.Events[0].Payload.(events.CommandAcceptedPayload)
	v.Intent = intent
	d.Events[0].Payload = v
	return d
}

// withPayload is c carrying payload p.
func withPayload(c Envelope, p any) (Envelope, error) {
	raw, err := json.Marshal(p)
	if err != nil {
		return c, fmt.Errorf("encode %s payload: %w", c.Type, err)
	}
	c.Payload = raw
	return c, nil
}

// FirstSessionRunID is the run a session message names when the session has
// no run yet: derived from the tenant, the session and the sandbox key, and
// placed on the key's partition (RunIDFor), so that every first message of a
// new session names the same run, and the first one admitted creates it.
func FirstSessionRunID(tenantID, sessionID string, sk events.SandboxKey, partitions int) string {
	return routed(partitions, sk, tenantID, "session", sessionID, SandboxKeyString(sk))
}
