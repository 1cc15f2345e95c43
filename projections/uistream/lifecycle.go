package uistream

import (
	"strings"

	"github.com/xbot-runtime/xbot/events"
)

// followUpKeyPrefix is how commands.FollowUpCreate spells the idempotency key
// of the CreateRun a follow-up produces: "follow_up:" + the follow-up's
// commandId.
const followUpKeyPrefix = "follow_up:"

// accepted records the input the reply answers, by its input id (seed
// 000): the Idempotency-Key of the message that asked for the reply — the
// create's own, or for a run a follow-up or a session message created, that
// message's (InputID); for an interrupt's next run, those of the messages
// queued on the interrupted run (InputIDs). Logs written before runs recorded InputID name a
// follow-up's run by the follow-up's commandId, recognised by the key and
// checked by re-deriving the CreateRun's id from it, so a client's own key
// that merely looks alike is not mistaken for one; a create without a key
// by its commandId.
func (m *Mapper) accepted(e events.Envelope, p *events.RunAcceptedPayload) {
	if len(p.InputIDs) > 0 { // an interrupt's next run answers the queued messages
		m.meta.InputIDs = append(m.meta.InputIDs, p.InputIDs...)
		return
	}
	input := p.InputID
	switch fu, ok := strings.CutPrefix(p.IdempotencyKey, followUpKeyPrefix); {
	case input != "":
	case ok && p.ParentRunID != "" && events.DerivedID("cmd", "follow_up", fu) == e.CommandID:
		input = fu
	default:
		input = inputID(p.IdempotencyKey, e.CommandID)
	}
	if input != "" {
		m.meta.InputIDs = append(m.meta.InputIDs, input)
	}
}

// snapshotFrozen takes the run's effective options from its capability
// snapshot into the metadata, so the start chunk (the snapshot comes just
// before runtime.run.started) shows them. A snapshot that does not decode
// shows none: the fold has checked it already.
func (m *Mapper) snapshotFrozen(p *events.SnapshotFrozenPayload) {
	var g events.SnapshotGovernance
	if events.Unmarshal(p.Snapshot, &g) == nil {
		m.meta.Options = g.Options
	}
}

// commandApplied adds a steer's or a clarification's input id (its
// Idempotency-Key; its commandId in a log without one) to the inputs the
// reply answers. A follow-up applied on this (ended) run is
// answered by the run it created, not by this one.
func (m *Mapper) commandApplied(e events.Envelope, p *events.CommandAppliedPayload) {
	if p.CommandType == "SubmitApprovalDecision" {
		m.decisionApplied()
		return
	}
	if p.CommandType != "AppendUserInput" || p.CreatedRunID != "" || e.CommandID == "" || m.seg == segEnded {
		return
	}
	m.meta.InputIDs = append(m.meta.InputIDs, inputID(p.IdempotencyKey, e.CommandID))
	m.metadataChanged()
}

// paused opens the interactions the run waits on that are not open yet (a
// clarification's question; approvals opened with awaiting_approval) and
// closes the message with finish "tool-calls".
func (m *Mapper) paused(p *events.RunPausedPayload) {
	for _, id := range p.ItemIDs {
		it := m.items[id]
		if it == nil || it.interaction != nil || it.typ != events.ItemClarificationRequest {
			continue
		}
		it.interaction = &Interaction{InteractionID: id, ItemID: id, Kind: KindQuestion, Status: InteractionOpen,
			ToolName: it.toolName, Question: it.question}
		m.emit(dataChunk("interaction", id, it.interaction, false))
	}
	m.close(segPaused, finishChunk("tool-calls", nil))
}

// The terminal handlers reopen a closed message before they set the
// outcome, so only the reply's last chunks carry it.

func (m *Mapper) completed() {
	m.open()
	m.meta.Outcome = "completed"
	s := m.snapshot()
	m.close(segEnded, finishChunk(finishReason(m.finishReason), &s))
}

func (m *Mapper) failed(text string) {
	m.open()
	m.meta.Outcome = "failed"
	s := m.snapshot()
	m.close(segEnded, Chunk{Type: "error", ErrorText: text}, finishChunk("error", &s))
}

// expired ends the reply of a run whose pause outlived its TTL. Nothing
// failed: nobody answered in time. So the reply finishes without an error
// chunk, finishReason "other" and outcome "expired"; the items it waited on
// already show expired (tool-output-error, data-interaction status expired).
func (m *Mapper) expired() {
	m.open()
	m.meta.Outcome = "expired"
	s := m.snapshot()
	m.close(segEnded, finishChunk("other", &s))
}

// cancelled ends the reply with abort; abort carries no metadata, so the
// outcome goes out just before it.
func (m *Mapper) cancelled(reason string) {
	m.open()
	m.meta.Outcome = "cancelled"
	m.close(segEnded, metadataChunk(m.snapshot()), Chunk{Type: "abort", Reason: reason})
}

// finishReason maps a model's finish reason (OpenAI spelling) to the SDK's.
func finishReason(model string) string {
	switch model {
	case "length":
		return "length"
	case "content_filter", "content-filter":
		return "content-filter"
	}
	return "stop"
}

// inputID is the input id of a command with idempotency key key: the key,
// or the commandId when the client sent none (the API then made the key
// "auto-<commandId>") or the log has none.
func inputID(key, commandID string) string {
	if key == "" || key == "auto-"+commandID {
		return commandID
	}
	return key
}
