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
	next, err := FollowUpCreate(c, p, *st, opts.Partitions, opts.Now)
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
