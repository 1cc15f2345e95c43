package commands

import (
	"encoding/json"

	"github.com/xbot-runtime/xbot/events"
)

// decide admits an AppendUserInput. Each intent is valid in one state: a
// steer while the run is running (it applies at the next
// before_model_request), a clarification while it is paused awaiting user
// input (the engine wakes to apply it), a follow-up once it has ended.
func (p *AppendUserInputPayload) decide(st *events.RunState, c Envelope, opts AdmitOptions) Decision {
	if p.Intent == IntentAuto {
		return decideAuto(st, c, p, opts)
	}
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
		return reject(c, events.CodeInvalidState, "intent %s is not valid while the run is %s", p.Intent, describe(st))
	}
	what := string(AppendUserInput) + "/" + p.Intent
	if p.Intent == IntentFollowUp && implemented(what, opts) {
		return followUp(st, c, p, opts)
	}
	return acceptIfImplemented(c, what, opts, wakeIfPaused(st))
}

// followUp applies a follow-up at once. It never reopens the finished run:
// it creates the next run of the session, and the finished run only records
// that it was applied.
func followUp(st *events.RunState, c Envelope, p *AppendUserInputPayload, opts AdmitOptions) Decision {
	var h *SessionHistory
	if opts.History != nil {
		h = opts.History()
	}
	next, err := FollowUpCreate(c, p, *st, h, opts.Partitions, opts.Now)
	if err != nil {
		return reject(c, events.CodeInternal, "internal error during admission")
	}
	return Decision{Outcome: events.OutcomeApplied, Events: []events.Draft{AppliedEvent(Pending(c), next.RunID)},
		Send: []Envelope{next}}
}

// PendingInput decodes pending command p as an AppendUserInput; ok is false
// when it is another command.
func PendingInput(p events.PendingCommand) (in AppendUserInputPayload, ok bool) {
	if p.Type != string(AppendUserInput) {
		return in, false
	}
	if len(p.Command) > 0 && json.Unmarshal(p.Command, &in) != nil {
		return in, false
	}
	if p.Intent != "" { // a session message: what it became
		in.Intent = appliedIntent(p.Intent)
	}
	return in, true
}

// UserMessageEvents record input in of pending command p as a user_message
// item.
func UserMessageEvents(p events.PendingCommand, in AppendUserInputPayload) []events.Draft {
	id := events.DerivedID("itm", "user_message", p.CommandID)
	data, _ := json.Marshal(events.UserMessageData{Intent: in.Intent, CommandID: p.CommandID})
	return []events.Draft{
		{Type: events.ItemStarted, ItemID: id, CommandID: p.CommandID,
			Payload: events.ItemStartedPayload{ItemType: events.ItemUserMessage, Content: in.Content, Data: data}},
		{Type: events.ItemCompleted, ItemID: id, CommandID: p.CommandID,
			Payload: events.ItemCompletedPayload{ItemType: events.ItemUserMessage, Status: events.ItemStatusCompleted, Content: in.Content}},
	}
}

// SteerEvents apply every steer pending in st, in the order they were
// accepted: each becomes a user_message item.
func SteerEvents(st events.RunState) []events.Draft {
	var drafts []events.Draft
	for _, p := range st.Pending {
		in, ok := PendingInput(p)
		if !ok || in.Intent != IntentSteer {
			continue
		}
		drafts = append(drafts, UserMessageEvents(p, in)...)
		drafts = append(drafts, AppliedEvent(p, ""))
	}
	return drafts
}

// ClarificationEvents apply the first clarification pending in st, which
// resumes the paused run: answer records it as the answer of each open
// clarification_request item it addresses. An answer that names no open
// question is recorded as a user message after resuming, so nothing the
// user said is lost. ok is false when no clarification is pending.
func ClarificationEvents(st events.RunState, answer func(item events.ItemRef, content string) events.Draft) (drafts []events.Draft, ok bool) {
	for _, p := range st.Pending {
		in, isInput := PendingInput(p)
		if !isInput || in.Intent != IntentClarification {
			continue
		}
		for _, it := range st.OpenItems() {
			if it.Type == events.ItemClarificationRequest && (in.InteractionID == "" || in.InteractionID == it.ID) {
				drafts = append(drafts, answer(it, in.Content))
			}
		}
		answered := len(drafts) > 0
		drafts = append(drafts, AppliedEvent(p, ""), events.Draft{Type: events.RunResumed, CommandID: p.CommandID})
		if !answered {
			drafts = append(drafts, UserMessageEvents(p, in)...)
		}
		return drafts, true
	}
	return nil, false
}
