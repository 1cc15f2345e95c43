package postgres

import (
	"github.com/xbot-runtime/xbot/events"
)

// runChange is what one batch does to one runs row.
type runChange struct {
	runID string
	// inserted: runtime.run.accepted is in the batch, so the row is written
	// whole from the fields below; otherwise only the change is applied to
	// an existing row (a run without a row, e.g. one whose log holds only a
	// rejected CreateRun, stays without one).
	inserted    bool
	tenantID    string
	sessionID   string
	agentID     string
	parentRunID string
	input       []byte
	sandboxKey  []byte
	metadata    []byte // nil = SQL NULL
	createdAt   int64
	// acceptedPartition and acceptedOffset locate runtime.run.accepted.
	acceptedPartition int32
	acceptedOffset    int64

	snapshotHash *string // nil = unchanged
	// usage is added to the row's totals (the whole totals when inserted).
	usage Usage

	status       string  // "" = unchanged
	pauseReason  string  // written together with status
	errorCode    *string // nil = unchanged
	cancelReason *string // nil = unchanged
	lastSeq      int64
	updatedAt    int64
	// lastActivity is the latest occurredAt of the run's events in the
	// batch (updatedAt is the last one's, which a clock step back lowers).
	lastActivity int64
}

// applyRun plans the effect of d on its runs row. It returns the accepted
// payload for runtime.run.accepted, which the commands model also needs.
func (p *batchPlan) applyRun(d decoded) (*events.RunAcceptedPayload, error) {
	e := d.env
	c := p.runs[e.RunID]
	var accepted *events.RunAcceptedPayload
	var err error
	switch e.Type {
	case events.RunAccepted:
		accepted = new(events.RunAcceptedPayload)
		if err = decodePayload(e, accepted); err == nil {
			c.accept(e, accepted)
			c.acceptedPartition, c.acceptedOffset = d.rec.Partition, d.rec.Offset
		}
	case events.RunPaused:
		var v events.RunPausedPayload
		err = decodePayload(e, &v)
		c.pauseReason = string(v.PauseReason)
	case events.RunFailed:
		var v events.RunFailedPayload
		err = decodePayload(e, &v)
		c.errorCode = &v.ErrorCode
	case events.RunCancelled:
		var v events.RunCancelledPayload
		err = decodePayload(e, &v)
		c.cancelReason = &v.Reason
	case events.ItemCompleted:
		var v *events.ItemCompletedPayload
		if v, err = p.itemCompleted(e); err == nil {
			err = c.addModelCall(e, v)
		}
	case events.ContextCompacted:
		err = c.addCompaction(e)
	case events.CapabilitySnapshotFrozen:
		var v struct {
			Hash string `json:"hash"` // the snapshot itself stays in run_events
		}
		err = decodePayload(e, &v)
		c.snapshotHash = ptr(clean(v.Hash))
	case events.RunStarted, events.RunResumed, events.RunCompleted, events.RunExpired,
		events.RunCheckpointRestored, events.RunQueued, events.SandboxAttached,
		events.CommandAccepted, events.CommandRejected, events.CommandApplied, events.CommandNoEffect,
		events.CommandDuplicate,
		events.ItemStarted, events.ItemDelta, events.ItemFailed, events.ItemAwaitingApproval,
		events.ApprovalDecisionSubmitted, events.PermissionGrantApplied, events.PermissionGrantRevoked:
		// No runs column beyond status, last_seq and updated_at depends on these.
	}
	if err != nil {
		return nil, err
	}
	c.setStatus(e)
	return accepted, nil
}

// setStatus applies the lifecycle effect and the position of e.
func (c *runChange) setStatus(e events.Envelope) {
	c.lastSeq, c.updatedAt, c.lastActivity = e.Seq, e.OccurredAt, max(c.lastActivity, e.OccurredAt)
	st, ok := events.StatusAfter(e.Type)
	if !ok {
		return
	}
	c.status = string(st)
	if st != events.StatusPaused {
		c.pauseReason = ""
	}
}

// accept resets c to the run described by runtime.run.accepted.
func (c *runChange) accept(e events.Envelope, v *events.RunAcceptedPayload) {
	*c = runChange{
		runID:       c.runID,
		inserted:    true,
		tenantID:    e.TenantID,
		sessionID:   e.PlatformSessionID,
		agentID:     v.AgentID,
		parentRunID: v.ParentRunID,
		input:       mustJSON(events.UserInput{Content: clean(v.Input.Content)}),
		sandboxKey:  mustJSON(cleanSandboxKey(v.SandboxKey)),
		createdAt:   e.OccurredAt,
	}
	if v.Metadata != nil {
		c.metadata = mustJSON(cleanMap(v.Metadata))
	}
}

// addModelCall counts a completed assistant_message, e with payload v, as a
// model call and adds its usage.
func (c *runChange) addModelCall(e events.Envelope, v *events.ItemCompletedPayload) error {
	if v.ItemType != events.ItemAssistantMessage {
		return nil
	}
	c.usage.ModelCalls++
	if len(v.Data) == 0 {
		return nil
	}
	var d events.AssistantData
	if err := decodeData(e, v.Data, &d); err != nil {
		return err
	}
	c.usage.add(d.Usage)
	return nil
}

// addCompaction counts a compaction and adds the usage of its summarising call.
func (c *runChange) addCompaction(e events.Envelope) error {
	var v struct {
		Usage *events.Usage `json:"usage"`
	}
	if err := decodePayload(e, &v); err != nil {
		return err
	}
	c.usage.Compactions++
	c.usage.add(v.Usage)
	return nil
}

func (u *Usage) add(v *events.Usage) {
	if v == nil {
		return
	}
	u.PromptTokens += int64(v.PromptTokens)
	u.CompletionTokens += int64(v.CompletionTokens)
	u.TotalTokens += int64(v.TotalTokens)
}
