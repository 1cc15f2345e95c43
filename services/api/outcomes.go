package api

import (
	"encoding/json"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/projections/uistream"
)

// FollowOutcomes makes the command endpoints answer from this instance's
// tail of the events topic: a command's outcome is known as soon as it is
// committed, without waiting for the read model. ready is closed once the
// tail delivers every record committed from then on (kafka.Tail.Ready); the
// wiring passes every batch of that tail to Observe.
func (a *API) FollowOutcomes(ready <-chan struct{}) {
	if ready == nil {
		panic("api.FollowOutcomes: ready is required")
	}
	a.tailReady.Store(&ready)
}

// following reports whether Observe sees every outcome committed from now on.
func (a *API) following() bool {
	p := a.tailReady.Load()
	if p == nil {
		return false
	}
	select {
	case <-*p:
		return true
	default:
		return false
	}
}

// Observe reads a batch of the events topic's tail for the outcomes of the
// commands this instance sent. Only records of runs with such a command are
// decoded, and only as far as needed.
func (a *API) Observe(recs []*uistream.Record) {
	for _, r := range recs {
		mine, elsewhere := a.flights.hasRun(r.RunID()), a.elsewhere.hasRun(r.RunID())
		if !mine && !elsewhere {
			continue
		}
		h, err := r.Head()
		if err != nil || h.CommandID == "" || !outcomeEvent(h.Type) {
			continue
		}
		match := func(f *flight) (CommandRecord, string, bool) {
			if f.env.TenantID != h.TenantID || (f.env.RunID != h.RunID && !f.anyRun) {
				return CommandRecord{}, "", false // as the read model: another tenant's or run's row is not this command's
			}
			rec, intent, err := outcomeRecord(r)
			if err != nil {
				a.log.Warn("reading a command outcome from the log", zap.String("command_id", h.CommandID),
					zap.String("run_id", h.RunID), zap.Error(err))
				return CommandRecord{}, "", false
			}
			return rec, intent, rec.Outcome != ""
		}
		if mine {
			a.flights.resolve(h.CommandID, match)
		}
		if elsewhere {
			a.elsewhere.resolve(h.CommandID, match)
		}
	}
}

func outcomeEvent(t events.Type) bool { return t == events.RunAccepted || events.IsCommandOutcome(t) }

// outcomeRecord is the commands read model's row after r, the command's
// first outcome event (projections/postgres commands.go makes the same), and
// what a session message became. A command delivered again, answered
// duplicate of itself, has no new outcome.
func outcomeRecord(r *uistream.Record) (CommandRecord, string, error) {
	e, err := r.Envelope()
	if err != nil {
		return CommandRecord{}, "", err
	}
	var v events.CommandOutcomeFields
	if len(e.Payload) > 0 {
		if err := json.Unmarshal(e.Payload, &v); err != nil {
			return CommandRecord{}, "", fmt.Errorf("decode %s payload: %w", e.Type, err)
		}
	}
	rec := CommandRecord{CommandID: e.CommandID, RunID: e.RunID, TenantID: e.TenantID, Type: v.CommandType,
		IdempotencyKey: v.IdempotencyKey, Seq: e.Seq, UpdatedAt: time.UnixMilli(e.OccurredAt).UTC()}
	switch e.Type {
	case events.RunAccepted:
		rec.Type, rec.Outcome = string(commands.CreateRun), string(events.OutcomeAccepted)
	case events.CommandAccepted:
		rec.Outcome = string(events.OutcomeAccepted)
	case events.CommandRejected:
		rec.Outcome, rec.Code, rec.Message = string(events.OutcomeRejected), v.Code, v.Message
	case events.CommandNoEffect:
		rec.Outcome, rec.Message = string(events.OutcomeNoEffect), v.Reason
	case events.CommandApplied:
		rec.Outcome, rec.CreatedRunID = string(events.OutcomeApplied), v.CreatedRunID
	case events.CommandDuplicate:
		if v.OriginalCommandID == e.CommandID {
			return CommandRecord{}, "", nil
		}
		rec.Outcome, rec.Code = string(events.OutcomeDuplicate), string(events.CodeDuplicateCommand)
		rec.OriginalCommandID, rec.OriginalOutcome, rec.OriginalCode = v.OriginalCommandID, v.OriginalOutcome, v.OriginalCode
		rec.Message = v.DuplicateMessage()
		rec.CreatedRunID = v.CreatedRunID // a session message's duplicate names it
	default:
		return CommandRecord{}, "", nil
	}
	rec.FirstOutcome = rec.Outcome
	if e.Type == events.CommandDuplicate {
		return rec, v.OriginalIntent, nil
	}
	return rec, v.Intent, nil
}

// complete reports whether rec, an outcome from the log, is the whole
// answer: a duplicate of a follow-up names the run its original created,
// which only the read model joins in (a duplicate of a session message
// names it itself).
func complete(rec CommandRecord) bool {
	return rec.Outcome != string(events.OutcomeDuplicate) || rec.Type != string(commands.AppendUserInput) || rec.CreatedRunID != ""
}
