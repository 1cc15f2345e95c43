package executor

import (
	"encoding/json"
	"fmt"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/kafka"
)

func jsonMarshal(v any) (json.RawMessage, error) { return json.Marshal(v) }

func jsonUnmarshal(data []byte, v any) error {
	if len(data) == 0 {
		return nil
	}
	return json.Unmarshal(data, v)
}

// outTopic is where and how the executor writes its own commands.
type outTopic struct {
	topic      string
	partitions int
	now        int64
	keys       commands.KeyRing
}

// admit turns one command record into the events that record its outcome.
// A record screen refuses is dead-lettered and changes no run.
func (b *batch) admit(rec kafka.Record) {
	log := b.w.log.With(zap.Int64("offset", rec.Offset))
	c, payload, ok := b.screen(rec)
	if !ok {
		return
	}
	st := b.state(c.RunID)
	opts := b.w.ex.admitOptions()
	opts.Partitions = b.w.part.Partitions()
	d := commands.Admit(st, c, payload, opts)
	id := identity(st, c)
	out := outTopic{topic: b.w.ex.cfg.Kafka.CommandsTopic(), partitions: b.w.part.Partitions(), now: b.now, keys: b.w.ex.cfg.CommandKeys}
	drafts, extra, err := outcomeDrafts(st, c, payload, d, out)
	if err == nil {
		err = b.push(id, drafts)
	}
	if err != nil {
		// Admission never proposes an illegal event; if it did, say so loudly
		// and record a rejection instead of losing the command.
		log.Error("admission produced an illegal event", zap.String("command_id", c.CommandID), zap.Error(err))
		_ = b.push(id, []events.Draft{rejected(c, commands.CodeInternal, "internal error during admission")})
		return
	}
	log.Debug("command admitted", zap.String("run_id", c.RunID), zap.String("command_id", c.CommandID),
		zap.String("type", string(c.Type)), zap.String("outcome", string(d.Outcome)))
	b.recs = append(b.recs, extra...)
	switch {
	case d.Outcome == commands.OutcomeApplied && c.Type == commands.SubmitApprovalDecision && st.Status == events.StatusRunning:
		b.wake = append(b.wake, c.RunID) // the last decision resumed the run: the engine runs what was allowed
	case d.Outcome != commands.OutcomeAccepted:
	case c.Type == commands.CreateRun:
		b.enqueue = append(b.enqueue, c.RunID) // starts when its sandbox key is free
	case c.Type == commands.CancelRun:
		b.cancels = append(b.cancels, c.RunID)
	case st.Status == events.StatusPaused:
		b.wake = append(b.wake, c.RunID) // e.g. a clarification: the engine resumes the run
	}
}

func identity(st *events.RunState, c commands.Envelope) events.Identity {
	if st.TenantID != "" {
		return events.Identity{RunID: c.RunID, TenantID: st.TenantID, PlatformSessionID: st.PlatformSessionID}
	}
	return events.Identity{RunID: c.RunID, TenantID: c.TenantID, PlatformSessionID: c.PlatformSessionID}
}

// outcomeDrafts returns the events that record decision d for command c on a
// run in state st, and the records the decision sends elsewhere in the same
// transaction (a follow-up's CreateRun for the session's next run).
func outcomeDrafts(st *events.RunState, c commands.Envelope, payload any, d commands.Decision, out outTopic) ([]events.Draft, []kafka.OutRecord, error) {
	pc := events.PendingCommand{CommandID: c.CommandID, Type: string(c.Type), IdempotencyKey: c.IdempotencyKey,
		Command: c.Payload, Actor: sender(c), Fingerprint: commands.Fingerprint(c)}
	switch d.Outcome {
	case commands.OutcomeRejected:
		return []events.Draft{rejected(c, d.Code, d.Message)}, nil, nil
	case commands.OutcomeDuplicate:
		return []events.Draft{{Type: events.CommandDuplicate, CommandID: c.CommandID, Payload: events.CommandDuplicatePayload{
			CommandType: string(c.Type), IdempotencyKey: c.IdempotencyKey, OriginalCommandID: d.Original.CommandID,
			OriginalOutcome: d.Original.Outcome, OriginalCode: d.Original.Code, Actor: pc.Actor}}}, nil, nil
	case commands.OutcomeNoEffect:
		return []events.Draft{noEffect(pc, d.Message)}, nil, nil
	case commands.OutcomeApplied:
		return appliedNow(st, c, payload, pc, out)
	case commands.OutcomeAccepted:
	}
	if p, ok := payload.(*commands.CreateRunPayload); ok {
		return []events.Draft{{Type: events.RunAccepted, CommandID: c.CommandID, Payload: events.RunAcceptedPayload{
			AgentID: p.AgentID, Input: p.Input, SandboxKey: p.SandboxKey, ParentRunID: p.ParentRunID,
			Metadata: p.Metadata, IdempotencyKey: c.IdempotencyKey, Actor: c.Actor, SessionGrants: p.SessionGrants,
			Fingerprint: pc.Fingerprint}}}, nil, nil
	}
	return []events.Draft{{Type: events.CommandAccepted, CommandID: c.CommandID, Payload: events.CommandAcceptedPayload{
		CommandType: string(c.Type), IdempotencyKey: c.IdempotencyKey, Command: c.Payload, Actor: pc.Actor,
		Fingerprint: pc.Fingerprint}}}, nil, nil
}

// appliedNow records a command that takes effect at admission: a cancel of a
// run at rest (queued or paused: its open items close as cancelled), or a
// follow-up on a finished run, which creates the session's next run.
func appliedNow(st *events.RunState, c commands.Envelope, payload any, pc events.PendingCommand, out outTopic) ([]events.Draft, []kafka.OutRecord, error) {
	switch p := payload.(type) {
	case *commands.CancelRunPayload:
		return append(closeOpenItems(*st, events.ToolErrCancelled, "the run was cancelled"), cancelDrafts(*st, pc)...), nil, nil
	case *commands.SubmitApprovalDecisionPayload:
		return decisionDrafts(*st, c, p, pc), nil, nil
	case *commands.AppendUserInputPayload:
		next, err := commands.FollowUpCreate(c, p, *st, out.partitions, out.now)
		if err != nil {
			return nil, nil, err
		}
		raw, err := json.Marshal(next)
		if err != nil {
			return nil, nil, err
		}
		return []events.Draft{applied(pc, next.RunID)},
			[]kafka.OutRecord{{Topic: out.topic, Key: next.RunID, Value: raw, Headers: out.keys.Sign(next.RunID, raw)}}, nil
	}
	return nil, nil, fmt.Errorf("no immediate effect defined for %s", c.Type)
}
