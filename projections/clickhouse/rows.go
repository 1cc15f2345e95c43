package clickhouse

import (
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/xbot-runtime/xbot/events"
)

// eventRow is one row of audit_events.
type eventRow struct {
	TenantID, RunID, EventID, Type, SessionID string
	Seq                                       uint64
	OccurredMs, EmittedMs                     uint64
	ActorType, ActorID                        string
	CommandID, CommandType, IdempotencyKey    string
	ItemID, ItemType, ToolName, Arguments     string
	Status, Decision, Scope, Reason           string
	RuleID, ApprovalID, GrantID               string
	ErrorCode, Message, PauseReason           string
	ExitCode                                  *int32
	AgentID, Model                            string
	TotalTokens                               uint32
	Payload                                   string
	Partition                                 int32
	Offset                                    int64
}

// maxMs is the last millisecond a DateTime column can hold (2106-02-07).
const maxMs = math.MaxUint32 * 1000

// rowOf maps an event to its audit_events row (audit_mv1_commands derives
// the audit_commands row of a command outcome from it). It fails only for an
// event that can never be applied: times out of DateTime's range or a
// payload that does not decode into its type. An unknown type is recorded
// with the envelope's fields.
func rowOf(e events.Envelope, partition int32, offset int64) (eventRow, error) {
	if e.OccurredAt < 0 || e.OccurredAt > maxMs || e.EmittedAt < 0 || e.EmittedAt > maxMs {
		return eventRow{}, fmt.Errorf("occurredAt %d or emittedAt %d is outside 1970-2106", e.OccurredAt, e.EmittedAt)
	}
	r := eventRow{TenantID: e.TenantID, RunID: e.RunID, Seq: uint64(e.Seq), EventID: e.EventID, Type: string(e.Type),
		SessionID: e.PlatformSessionID, OccurredMs: uint64(e.OccurredAt), EmittedMs: uint64(e.EmittedAt),
		CommandID: e.CommandID, ItemID: e.ItemID, Payload: string(e.Payload), Partition: partition, Offset: offset}
	if !events.Known(e.Type) {
		return r, nil // a newer writer's event: keep what every event has
	}
	p, err := e.DecodePayload()
	if err != nil {
		return eventRow{}, err
	}
	if !fillCommand(&r, p) {
		fillOther(&r, p)
	}
	return r, nil
}

// fillCommand sets the columns of a command outcome and reports whether p is
// one.
func fillCommand(r *eventRow, p any) bool {
	switch v := p.(type) {
	case *events.RunAcceptedPayload:
		r.ActorType, r.ActorID, r.AgentID = v.Actor.Type, v.Actor.ID, v.AgentID
		r.CommandType, r.IdempotencyKey = "CreateRun", v.IdempotencyKey
	case *events.CommandAcceptedPayload:
		r.CommandType, r.IdempotencyKey = v.CommandType, v.IdempotencyKey
		fillActor(r, v.Actor)
	case *events.CommandRejectedPayload:
		r.CommandType, r.IdempotencyKey, r.ErrorCode, r.Message = v.CommandType, v.IdempotencyKey, string(v.Code), v.Message
		fillActor(r, v.Actor)
	case *events.CommandAppliedPayload:
		r.CommandType, r.IdempotencyKey = v.CommandType, v.IdempotencyKey
		fillActor(r, v.Actor)
	case *events.CommandNoEffectPayload:
		r.CommandType, r.IdempotencyKey, r.Reason = v.CommandType, v.IdempotencyKey, v.Reason
		fillActor(r, v.Actor)
	case *events.CommandDuplicatePayload:
		r.CommandType, r.IdempotencyKey = v.CommandType, v.IdempotencyKey
		fillActor(r, v.Actor)
	default:
		return false
	}
	return true
}

// fillActor sets the actor columns of a command outcome that names its
// sender; outcomes from before the events named it leave them empty.
func fillActor(r *eventRow, a *events.Actor) {
	if a != nil {
		r.ActorType, r.ActorID = a.Type, a.ID
	}
}

// fillOther sets the columns of events that are not command outcomes. Every
// other payload type of the catalog is listed, so a new one is a decision.
func fillOther(r *eventRow, p any) {
	switch v := p.(type) {
	case *events.RunPausedPayload:
		r.PauseReason = string(v.PauseReason)
	case *events.RunExpiredPayload:
		r.PauseReason = string(v.PauseReason) // pausedAt and pauseTtlMs stay in payload
	case *events.RunFailedPayload:
		r.ErrorCode, r.Message = v.ErrorCode, v.Message
	case *events.RunCancelledPayload:
		r.Reason = v.Reason
	case *events.ItemStartedPayload:
		r.ItemType = string(v.ItemType)
		fillItemData(r, v.Data)
	case *events.ItemCompletedPayload:
		r.ItemType, r.Status = string(v.ItemType), v.Status
		fillItemData(r, v.Data)
	case *events.ItemFailedPayload:
		r.ItemType, r.ErrorCode, r.Message = string(v.ItemType), v.ErrorCode, v.Message
		r.RuleID = v.RuleID
	case *events.ContextCompactedPayload:
		// tokenStats, sourceRange and the summary stay in payload.
		r.Reason = v.TriggerReason
		if v.Usage != nil && v.Usage.TotalTokens > 0 {
			r.TotalTokens = uint32(min(v.Usage.TotalTokens, math.MaxUint32))
		}
	case *events.ItemAwaitingApprovalPayload, *events.ApprovalDecisionPayload, *events.PermissionGrantPayload,
		*events.PermissionGrantRevokedPayload:
		fillGovernance(r, p)
	case *events.RunStartedPayload, *events.RunResumedPayload, *events.RunQueuedPayload, *events.RunCompletedPayload,
		*events.CheckpointRestoredPayload, *events.ItemDeltaPayload, *events.SnapshotFrozenPayload, *events.SandboxAttachedPayload:
		// Nothing beyond the envelope and the payload text (a snapshot's
		// hash is its payload's first field).
	}
}

// fillGovernance sets the columns of an approval request, a decision and a
// grant: what was asked, by which rule, who decided and what it granted.
func fillGovernance(r *eventRow, p any) {
	switch v := p.(type) {
	case *events.ItemAwaitingApprovalPayload:
		r.ItemType, r.ToolName, r.Arguments = string(v.ItemType), v.ToolName, string(v.Input)
		r.ApprovalID, r.RuleID, r.Reason = v.ApprovalID, v.RuleID, v.Reason
		r.GrantID = v.GrantID // the grant that no longer covers the call (askReason stays in payload)
	case *events.ApprovalDecisionPayload:
		r.Decision, r.Scope, r.Reason = v.Decision, v.Scope, v.Reason
		r.ActorType, r.ActorID = v.Actor.Type, v.Actor.ID
		r.ApprovalID, r.GrantID = v.ApprovalID, v.GrantID
	case *events.PermissionGrantPayload:
		r.Scope, r.ToolName, r.RuleID, r.GrantID = v.Scope, v.ToolName, v.RuleID, v.GrantID
		r.ActorType, r.ActorID = v.Actor.Type, v.Actor.ID
		if r.ItemID == "" {
			r.ItemID = v.ItemID // the item whose approval gave the grant
		}
	case *events.PermissionGrantRevokedPayload:
		r.Scope, r.ToolName, r.RuleID, r.GrantID, r.Reason = v.Scope, v.ToolName, v.RuleID, v.GrantID, v.Reason
		r.ActorType, r.ActorID = v.Actor.Type, v.Actor.ID
	}
}

// itemData is the union of the item Data fields the audit columns use
// (events.ToolCallData, ToolResultData, AssistantData).
type itemData struct {
	ToolName  string `json:"toolName"`
	Arguments string `json:"arguments"`
	Exec      *struct {
		ExitCode int64 `json:"exitCode"`
	} `json:"exec"`
	Model string        `json:"model"`
	Usage *events.Usage `json:"usage"`
}

// fillItemData sets the columns an item's Data carries. Data is free-form
// per item type and the state machine does not check it, so Data that does
// not decode leaves the columns empty rather than stopping the run's audit.
func fillItemData(r *eventRow, raw json.RawMessage) {
	var d itemData
	if len(raw) == 0 || events.Unmarshal(raw, &d) != nil {
		return
	}
	r.ToolName, r.Arguments, r.Model = d.ToolName, d.Arguments, d.Model
	if d.Exec != nil && d.Exec.ExitCode >= math.MinInt32 && d.Exec.ExitCode <= math.MaxInt32 {
		code := int32(d.Exec.ExitCode)
		r.ExitCode = &code
	}
	if d.Usage != nil && d.Usage.TotalTokens > 0 {
		r.TotalTokens = uint32(min(d.Usage.TotalTokens, math.MaxUint32))
	}
}

// msTime converts Unix milliseconds to a time for a DateTime column.
func msTime(ms uint64) time.Time { return time.UnixMilli(int64(ms)).UTC() }
