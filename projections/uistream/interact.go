package uistream

import "github.com/xbot-runtime/xbot/events"

// awaitingApproval asks for a tool call's approval: the tool part moves to
// approval-requested (approvalId = the item id, which SubmitApprovalDecision
// names; the runtime's own approvalId, the policy rule and its reason go in
// approvalDescriptor) and a data-interaction part describes the question.
// Several items may await at once; the message closes when the run pauses.
func (m *Mapper) awaitingApproval(id string, p *events.ItemAwaitingApprovalPayload) {
	it := m.items[id]
	if it == nil {
		return
	}
	if !it.tool { // only tool parts can be approved: give the item one
		m.startTool(id, it, p.ToolName, string(p.Input))
	}
	name, input := it.toolName, it.input
	if p.ToolName != "" {
		name = p.ToolName
	}
	if len(p.Input) > 0 {
		input = toolInput(string(p.Input))
	}
	it.interaction = &Interaction{InteractionID: id, ItemID: id, Kind: KindToolApproval, Status: InteractionOpen,
		ToolName: name, Input: input, ApprovalID: p.ApprovalID, RuleID: p.RuleID, Reason: p.Reason}
	req := Chunk{Type: "tool-approval-request", ApprovalID: id, ToolCallID: id}
	if d := (ApprovalDescriptor{ApprovalID: p.ApprovalID, RuleID: p.RuleID, Reason: p.Reason}); d != (ApprovalDescriptor{}) {
		req.ApprovalDescriptor = mustJSON(d)
	}
	m.emit(req, dataChunk("interaction", id, it.interaction, false))
}

// decision records a decision on an approval: the interaction is answered
// (by whom, and through which grant when a grant given for another call
// covered this one). A denied call's part moves to output-denied; an allowed
// one waits for its output.
func (m *Mapper) decision(id string, p *events.ApprovalDecisionPayload) {
	it := m.items[id]
	if it == nil || it.interaction == nil {
		return
	}
	in := it.interaction
	in.Status, in.Decision, in.Scope, in.DecisionReason, in.GrantID = InteractionAnswered, p.Decision, p.Scope, p.Reason, p.GrantID
	if p.Actor != (events.Actor{}) {
		actor := p.Actor
		in.DecidedBy = &actor
	}
	m.emit(dataChunk("interaction", id, in, false))
	if p.Decision == events.DecisionDeny {
		m.deny(id, it)
	}
}

// deny moves a tool part to output-denied, once.
func (m *Mapper) deny(id string, it *itemState) {
	if it.tool && !it.denied {
		it.denied = true
		m.emit(Chunk{Type: "tool-output-denied", ToolCallID: id})
	}
}

// decisionApplied shows at once the decisions of a SubmitApprovalDecision
// that leaves the run paused (other items still await): their chunks were
// held, so the message reopens for them and closes again. When no approval
// is open any more the run resumes next, and the held chunks go out with it.
func (m *Mapper) decisionApplied() {
	if m.seg != segPaused || len(m.held) == 0 || !m.approvalOpen() {
		return
	}
	m.close(segPaused, finishChunk("tool-calls", nil))
}

// approvalOpen reports whether an approval still waits for a decision.
func (m *Mapper) approvalOpen() bool {
	for _, it := range m.items {
		if in := it.interaction; in != nil && in.Kind == KindToolApproval && in.Status == InteractionOpen {
			return true
		}
	}
	return false
}

// compacted shows a compaction artifact as a data-compaction part: the
// conversation before it was summarised for the model (the UI keeps showing
// it). Not transient, so a reloaded message still shows where it happened.
func (m *Mapper) compacted(p *events.ContextCompactedPayload) {
	m.emit(dataChunk("compaction", p.ArtifactID, Compaction{ArtifactID: p.ArtifactID, TriggerReason: p.TriggerReason,
		CutoffEventSeq: p.CutoffEventSeq, TokenStats: p.TokenStats, Summary: p.Summary}, false))
}

// ApprovalDescriptor is the approvalDescriptor of a tool-approval-request
// (the SDK's part.approval.descriptor): the runtime's approval request id,
// the policy rule that asks and why, for display.
type ApprovalDescriptor struct {
	ApprovalID string `json:"approvalId,omitempty"`
	RuleID     string `json:"ruleId,omitempty"`
	Reason     string `json:"reason,omitempty"`
}

// Compaction is the data of a data-compaction part (id = artifactId): the
// context up to CutoffEventSeq was replaced by Summary for the model.
type Compaction struct {
	ArtifactID     string                   `json:"artifactId"`
	TriggerReason  string                   `json:"triggerReason"`
	CutoffEventSeq int64                    `json:"cutoffEventSeq"`
	TokenStats     events.TokenStats        `json:"tokenStats"`
	Summary        events.CompactionSummary `json:"summary"`
}
