package executor

import (
	"encoding/json"
	"errors"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/kafka"
)

func jsonUnmarshal(data []byte, v any) error {
	if len(data) == 0 {
		return nil
	}
	return json.Unmarshal(data, v)
}

// admit turns one command record into the events that record its outcome.
func (b *batch) admit(rec kafka.Record) {
	log := b.a.log.With(zap.Int64("offset", rec.Offset))
	c, payload, err := commands.Decode(rec.Value)
	if err != nil {
		b.rejectInvalid(rec, c, err, log)
		return
	}
	if rec.Key != c.RunID {
		log.Warn("command record key is not its runId; processing by runId", zap.String("run_id", c.RunID))
	}
	st := b.state(c.RunID)
	d := commands.Admit(st, c, payload, b.a.ex.admitOptions())
	id := identity(st, c)
	drafts := outcomeDrafts(c, payload, d)
	if err := b.push(id, drafts); err != nil {
		// Admission never proposes an illegal event; if it did, say so loudly
		// and record a rejection instead of losing the command.
		log.Error("admission produced an illegal event", zap.String("command_id", c.CommandID), zap.Error(err))
		_ = b.push(id, []events.Draft{rejected(c, commands.CodeInternal, "internal error during admission")})
		return
	}
	log.Debug("command admitted", zap.String("run_id", c.RunID), zap.String("command_id", c.CommandID),
		zap.String("type", string(c.Type)), zap.String("outcome", string(d.Outcome)))
	switch {
	case c.Type == commands.CreateRun && d.Outcome == commands.OutcomeAccepted:
		b.newRuns = append(b.newRuns, c.RunID)
	case c.Type == commands.CancelRun && d.Outcome == commands.OutcomeAccepted:
		b.cancels = append(b.cancels, c.RunID)
	}
}

// rejectInvalid records a command that failed validation, when it names a
// valid run; a record without one cannot be attributed and is only logged.
func (b *batch) rejectInvalid(rec kafka.Record, c commands.Envelope, err error, log *zap.Logger) {
	var ve *commands.ValidationError
	if !errors.As(err, &ve) || !events.ValidID("run", c.RunID) || !events.ValidID("cmd", c.CommandID) {
		log.Error("dropping undecodable command record", zap.String("key", rec.Key), zap.Error(err))
		return
	}
	st := b.state(c.RunID)
	if err := b.push(identity(st, c), []events.Draft{rejected(c, commands.CodeValidationFailed, ve.Error())}); err != nil {
		log.Error("recording invalid command failed", zap.Error(err))
	}
}

func identity(st *events.RunState, c commands.Envelope) events.Identity {
	if st.TenantID != "" {
		return events.Identity{RunID: c.RunID, TenantID: st.TenantID, PlatformSessionID: st.PlatformSessionID}
	}
	return events.Identity{RunID: c.RunID, TenantID: c.TenantID, PlatformSessionID: c.PlatformSessionID}
}

func outcomeDrafts(c commands.Envelope, payload any, d commands.Decision) []events.Draft {
	switch d.Outcome {
	case commands.OutcomeRejected:
		return []events.Draft{rejected(c, d.Code, d.Message)}
	case commands.OutcomeDuplicate:
		return []events.Draft{{Type: events.CommandDuplicate, CommandID: c.CommandID, Payload: events.CommandDuplicatePayload{
			CommandType: string(c.Type), IdempotencyKey: c.IdempotencyKey, OriginalCommandID: d.Original.CommandID,
			OriginalOutcome: d.Original.Outcome, OriginalCode: d.Original.Code}}}
	case commands.OutcomeNoEffect:
		return []events.Draft{{Type: events.CommandNoEffect, CommandID: c.CommandID, Payload: events.CommandNoEffectPayload{
			CommandType: string(c.Type), IdempotencyKey: c.IdempotencyKey, Reason: d.Message}}}
	case commands.OutcomeApplied:
		return cancelDrafts(events.PendingCommand{CommandID: c.CommandID, Type: string(c.Type),
			IdempotencyKey: c.IdempotencyKey, Command: c.Payload})
	case commands.OutcomeAccepted:
	}
	if p, ok := payload.(*commands.CreateRunPayload); ok {
		return []events.Draft{{Type: events.RunAccepted, CommandID: c.CommandID, Payload: events.RunAcceptedPayload{
			AgentID: p.AgentID, Input: p.Input, SandboxKey: p.SandboxKey, ParentRunID: p.ParentRunID,
			Metadata: p.Metadata, IdempotencyKey: c.IdempotencyKey, Actor: c.Actor}}}
	}
	return []events.Draft{{Type: events.CommandAccepted, CommandID: c.CommandID, Payload: events.CommandAcceptedPayload{
		CommandType: string(c.Type), IdempotencyKey: c.IdempotencyKey, Command: c.Payload}}}
}

func rejected(c commands.Envelope, code commands.Code, msg string) events.Draft {
	return events.Draft{Type: events.CommandRejected, CommandID: c.CommandID, Payload: events.CommandRejectedPayload{
		CommandType: string(c.Type), IdempotencyKey: c.IdempotencyKey, Code: string(code), Message: msg}}
}
