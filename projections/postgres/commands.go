package postgres

import "github.com/xbot-runtime/xbot/events"

// The outcomes and codes of the log (events.Outcome, events.Code) as the
// read model's text columns hold them. createRunType is commands.CreateRun;
// projections do not import commands.
const (
	outcomeAccepted      = string(events.OutcomeAccepted)
	outcomeRejected      = string(events.OutcomeRejected)
	outcomeApplied       = string(events.OutcomeApplied)
	outcomeNoEffect      = string(events.OutcomeNoEffect)
	outcomeDuplicate     = string(events.OutcomeDuplicate)
	codeDuplicateCommand = string(events.CodeDuplicateCommand)
	createRunType        = "CreateRun"
)

// commandRow is a commands row as the batch leaves it. firstOutcome is only
// written when the row is new.
type commandRow struct {
	commandID         string
	runID             string
	tenantID          string
	sessionID         string
	typ               string
	idempotencyKey    string
	outcome           string
	firstOutcome      string
	code              string
	message           string
	originalCommandID string
	originalOutcome   string
	originalCode      string
	createdRunID      string
	seq               int64
	updatedAt         int64
}

// applyCommand plans the effect of e on the commands read model.
func (p *batchPlan) applyCommand(e events.Envelope, accepted *events.RunAcceptedPayload) error {
	if accepted != nil {
		if e.CommandID != "" {
			p.record(e, commandRow{typ: createRunType, idempotencyKey: accepted.IdempotencyKey, outcome: outcomeAccepted})
		}
		return nil
	}
	outcome, ok := outcomeOf[e.Type]
	if !ok {
		return nil
	}
	row, err := outcomeRow(e, outcome)
	if err != nil {
		return err
	}
	if e.CommandID == "" {
		return nil // nothing to key the row by; the event stays in run_events
	}
	if row.outcome == outcomeDuplicate && row.originalCommandID == e.CommandID {
		// The same command delivered again: its original outcome stands.
		p.notifyOnce(e.CommandID)
		return nil
	}
	p.record(e, row)
	return nil
}

// outcomeOf maps the runtime.command.* events to the outcome they record.
var outcomeOf = map[events.Type]string{
	events.CommandAccepted:  outcomeAccepted,
	events.CommandRejected:  outcomeRejected,
	events.CommandApplied:   outcomeApplied,
	events.CommandNoEffect:  outcomeNoEffect,
	events.CommandDuplicate: outcomeDuplicate,
}

// outcomeRow decodes a runtime.command.* payload into the row it leads to.
func outcomeRow(e events.Envelope, outcome string) (commandRow, error) {
	var v events.CommandOutcomeFields
	if err := decodePayload(e, &v); err != nil {
		return commandRow{}, err
	}
	row := commandRow{typ: v.CommandType, idempotencyKey: v.IdempotencyKey, outcome: outcome}
	switch outcome {
	case outcomeRejected:
		row.code, row.message = v.Code, v.Message
	case outcomeNoEffect:
		row.message = v.Reason
	case outcomeApplied:
		row.createdRunID = v.CreatedRunID
	case outcomeDuplicate:
		row.code = codeDuplicateCommand
		row.originalCommandID, row.originalOutcome, row.originalCode = v.OriginalCommandID, v.OriginalOutcome, v.OriginalCode
		row.message = v.DuplicateMessage()
	}
	return row, nil
}

// record merges row, the outcome carried by e, into the batch's commands.
func (p *batchPlan) record(e events.Envelope, row commandRow) {
	row.commandID, row.runID, row.tenantID, row.sessionID = e.CommandID, e.RunID, e.TenantID, e.PlatformSessionID
	row.seq, row.updatedAt = e.Seq, e.OccurredAt
	if prev, ok := p.commands[e.CommandID]; ok {
		row.firstOutcome = prev.firstOutcome
		*prev = row
	} else {
		row.firstOutcome = row.outcome
		p.commands[e.CommandID] = &row
		p.cmdOrder = append(p.cmdOrder, e.CommandID)
	}
	p.notifyOnce(e.CommandID)
}

// notifyOnce adds id to the notifications of the batch.
func (p *batchPlan) notifyOnce(id string) {
	if _, ok := p.notified[id]; ok {
		return
	}
	p.notified[id] = struct{}{}
	p.notify = append(p.notify, id)
}
