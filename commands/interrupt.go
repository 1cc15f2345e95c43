package commands

import (
	"encoding/json"
	"strings"

	"github.com/xbot-runtime/xbot/events"
)

// AdmitInterrupt decides interrupt c (a CancelRun with Interrupt set) of a
// session: it walks from the run c names to the session's head as a session
// message does (AdmitSessionMessage) and cancels the head's current reply
// there, keeping the session: its next message starts the next run. A head
// that has finished has no reply to stop: the interrupt has no effect. A
// head whose create is not admitted yet is waited for as a message waits:
// the interrupt is sent again behind the create.
func AdmitInterrupt(c Envelope, p *CancelRunPayload, state func(runID string) *events.RunState, opts AdmitOptions) SessionRoute {
	id, prev := sessionHead(c, state)
	st := state(id)
	at := c
	at.RunID = id
	_, seen := st.Commands[c.IdempotencyKey]
	switch {
	case st.Exists() && st.Status.Terminal() && !seen:
		return SessionRoute{Command: at, Payload: p, Decision: noEffect(at, "the session has no reply in progress")}
	case st.Exists() || seen || prev == nil:
		return SessionRoute{Command: at, Payload: p, Decision: Admit(st, at, p, opts)}
	}
	if p.Behind == id { // the create was refused: there is no reply to stop
		back := c
		back.RunID = prev.RunID
		return SessionRoute{Command: back, Payload: p, Decision: noEffect(back, "the session has no reply in progress")}
	}
	again := *p
	again.Behind = id
	env, err := withPayload(c, &again)
	if err != nil {
		return SessionRoute{Command: at, Payload: p, Decision: reject(c, events.CodeInternal, "internal error during admission")}
	}
	return SessionRoute{Command: at, Payload: p, Resend: true, Decision: Decision{Outcome: events.OutcomeAccepted, Send: []Envelope{env}}}
}

// InterruptEvents record interrupt p ending the session's head run st, at
// a safe point or at rest, as CancelEvents does; the session messages still
// pending on it are dropped (cancelQueued) or become the session's next run,
// returned in send: one follow-up whose input is their contents in the
// order they were accepted, each recorded as applied with that run.
func InterruptEvents(st events.RunState, p events.PendingCommand, unstarted []events.Draft, partitions int, now int64) (drafts []events.Draft, send []Envelope) {
	var payload CancelRunPayload
	if len(p.Command) > 0 {
		_ = json.Unmarshal(p.Command, &payload) // validated at admission
	}
	queued, others := pendingOf(st, p)
	drafts = append(append([]events.Draft(nil), unstarted...),
		events.FailOpenItems(st, events.ToolErrCancelled, "the session was interrupted")...)
	var next string
	if len(queued) > 0 && !payload.CancelQueued {
		contents, inputs := make([]string, len(queued)), make([]string, len(queued))
		for i, q := range queued {
			in, _ := PendingInput(q)
			contents[i], inputs[i] = in.Content, InputIDOf(q.IdempotencyKey, q.CommandID)
		}
		if env, err := interruptFollowUp(st, p, strings.Join(contents, "\n\n"), inputs, partitions, now); err == nil {
			next, send = env.RunID, []Envelope{env}
		}
	}
	for _, q := range queued {
		if next == "" {
			drafts = append(drafts, NoEffectEvent(q, "dropped: the session was interrupted with cancelQueued"))
			continue
		}
		d := AppliedEvent(q, next)
		v := d.Payload.(events.CommandAppliedPayload)
		v.Intent = IntentFollowUp
		d.Payload = v
		drafts = append(drafts, d)
	}
	drafts = append(drafts, AppliedEvent(p, ""),
		events.Draft{Type: events.RunCancelled, CommandID: p.CommandID, Payload: events.RunCancelledPayload{Reason: payload.Reason}})
	for _, q := range others {
		drafts = append(drafts, NoEffectEvent(q, "the run was cancelled before the command could apply"))
	}
	return drafts, send
}

// pendingOf splits the commands pending on st besides interrupt p: the
// session messages queued on it, and the others.
func pendingOf(st events.RunState, p events.PendingCommand) (queued, others []events.PendingCommand) {
	for _, q := range st.Pending {
		_, ok := PendingInput(q)
		switch {
		case q.CommandID == p.CommandID:
		case ok:
			queued = append(queued, q)
		default:
			others = append(others, q)
		}
	}
	return queued, others
}

// interruptFollowUp is the CreateRun of the session's next run from the
// messages an interrupt kept: a follow-up of st sent by the interrupt, with
// ids derived from it, that answers those messages (inputs, their input
// ids). Its engine finds the history on the partition.
func interruptFollowUp(st events.RunState, p events.PendingCommand, content string, inputs []string, partitions int, now int64) (Envelope, error) {
	by := Envelope{CommandID: p.CommandID, Actor: events.Actor{Type: "system", ID: "interrupt"}}
	if p.Actor != nil {
		by.Actor = *p.Actor
	}
	env, err := FollowUpCreate(by, &AppendUserInputPayload{Intent: IntentFollowUp, Content: content}, st, nil, partitions, now)
	if err != nil {
		return env, err
	}
	var cp CreateRunPayload
	if err := json.Unmarshal(env.Payload, &cp); err != nil {
		return env, err
	}
	cp.InputID, cp.InputIDs = "", inputs
	env.Payload, err = json.Marshal(cp)
	return env, err
}

// InputIDOf is the input id of a command sent under idempotency key key:
// the key, or its commandId when the client sent none (the API then makes
// the key "auto-<commandId>") or the log has none.
func InputIDOf(key, commandID string) string {
	if key == "" || key == "auto-"+commandID {
		return commandID
	}
	return key
}
