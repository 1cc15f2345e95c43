package commands

import (
	"encoding/json"
	"fmt"

	"github.com/xbot-runtime/xbot/events"
)

// FollowUpRunID is the id of the run a follow-up creates. It is derived from
// the follow-up's commandId, so a redelivered follow-up can never fork two
// runs, and placed on the sandbox key's partition like every run (RunIDFor).
func FollowUpRunID(followUpCommandID string, sk events.SandboxKey, partitions int) string {
	return routed(partitions, sk, "follow_up", followUpCommandID)
}

// FollowUpCreate returns the CreateRun command by which a follow-up on the
// finished run parent starts the session's next run: same tenant, session,
// agent and sandbox, parentRunId set, the follow-up's content as input. Every
// id is derived from the follow-up, so producing it twice is harmless (the
// second is a duplicate of the first). history locates the parent and its
// own earlier runs (nil when not known).
func FollowUpCreate(followUp Envelope, p *AppendUserInputPayload, parent events.RunState, history *SessionHistory, partitions int, issuedAt int64) (Envelope, error) {
	if p.Intent != IntentFollowUp {
		return Envelope{}, fmt.Errorf("follow-up create: intent is %q", p.Intent)
	}
	payload, err := json.Marshal(CreateRunPayload{
		AgentID: parent.AgentID, Input: events.UserInput{Content: p.Content},
		SandboxKey: parent.SandboxKey, ParentRunID: parent.RunID,
		// The session's grants in force go on with it; a revoked or
		// expired one does not.
		SessionGrants: parent.SessionGrants(issuedAt),
		History:       history,
		// A session message's options apply to the run it creates.
		Options: p.Options,
		InputID: followUp.IdempotencyKey,
	})
	if err != nil {
		return Envelope{}, err
	}
	return Envelope{
		CommandID:         events.DerivedID("cmd", "follow_up", followUp.CommandID),
		IdempotencyKey:    "follow_up:" + followUp.CommandID,
		RunID:             FollowUpRunID(followUp.CommandID, parent.SandboxKey, partitions),
		PlatformSessionID: parent.PlatformSessionID,
		Type:              CreateRun,
		Actor:             followUp.Actor,
		TenantID:          parent.TenantID,
		IssuedAt:          issuedAt,
		SchemaVersion:     events.SchemaVersion,
		Payload:           payload,
	}, nil
}
