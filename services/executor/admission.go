package executor

import (
	"encoding/json"
	"fmt"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/infra/tracing"
)

// admit turns one command record into the events that record its outcome:
// decode, decide, apply. A record screen refuses is dead-lettered and
// changes no run.
func (b *batch) admit(rec kafka.Record) {
	log := b.w.log.With(zap.Int64("offset", rec.Offset))
	c, payload, ok := b.screen(rec)
	if !ok {
		return
	}
	tracing.NoteCommand(c.RunID, rec.Headers) // the run's engine continues the command's trace
	st := b.state(c.RunID)
	opts := b.w.ex.admitOptions()
	opts.Partitions, opts.Now = b.w.part.Partitions(), b.now
	opts.History = func() *commands.SessionHistory {
		if r, ok := b.w.runs[c.RunID]; ok {
			return r.sessionRefs(b.w.eventsEnd)
		}
		return nil
	}
	opts.HistoryOf = b.historyOf
	var d commands.Decision
	c, payload, d = b.decide(st, c, payload, opts)
	st = b.state(c.RunID)
	d = b.resumeOrQueue(st, c, payload, d)
	id := identity(st, c)
	sent, err := b.outRecords(d.Send)
	if err == nil {
		err = b.push(id, d.Events)
	}
	if err != nil {
		// Admission never proposes an illegal event; if it did, say so loudly
		// and record a rejection instead of losing the command.
		log.Error("admission produced an illegal event", zap.String("command_id", c.CommandID), zap.Error(err))
		_ = b.push(id, []events.Draft{commands.RejectedEvent(c, events.CodeInternal, "internal error during admission")})
		return
	}
	log.Debug("command admitted", zap.String("run_id", c.RunID), zap.String("command_id", c.CommandID),
		zap.String("type", string(c.Type)), zap.String("outcome", string(d.Outcome)))
	b.recs = append(b.recs, sent...)
	switch d.Then {
	case commands.EffectEnqueue:
		if !b.startAtAdmission(c.RunID) {
			b.enqueue = append(b.enqueue, c.RunID) // starts when its sandbox key is free
		}
		b.orders[c.RunID] = b.nextOrder
		b.nextOrder++
		if p, ok := payload.(*commands.CreateRunPayload); ok {
			b.histories[c.RunID] = p.History
		}
	case commands.EffectInterrupt:
		b.cancels = append(b.cancels, c.RunID)
	case commands.EffectWake:
		b.wake = append(b.wake, c.RunID)
	case commands.EffectNone:
	}
}

// outRecords encodes and signs the commands a decision sends, for the
// commands topic.
func (b *batch) outRecords(cmds []commands.Envelope) ([]kafka.OutRecord, error) {
	recs := make([]kafka.OutRecord, 0, len(cmds))
	for _, c := range cmds {
		raw, err := json.Marshal(c)
		if err != nil {
			return nil, fmt.Errorf("encode command %s: %w", c.CommandID, err)
		}
		recs = append(recs, kafka.OutRecord{Topic: b.w.ex.cfg.Kafka.CommandsTopic(), Key: c.RunID, Value: raw,
			Headers: b.w.ex.cfg.CommandKeys.Sign(c.RunID, raw)})
	}
	return recs, nil
}

func identity(st *events.RunState, c commands.Envelope) events.Identity {
	if st.TenantID != "" {
		return events.Identity{RunID: c.RunID, TenantID: st.TenantID, PlatformSessionID: st.PlatformSessionID}
	}
	return events.Identity{RunID: c.RunID, TenantID: c.TenantID, PlatformSessionID: c.PlatformSessionID}
}
