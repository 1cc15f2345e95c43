package uistream

import "github.com/xbot-runtime/xbot/events"

// awaitingApproval asks for a tool call's approval: the tool part moves to
// approval-requested (approvalId = the item id, which SubmitApprovalDecision
// names) and a data-interaction part describes the question. The message
// closes when the run pauses.
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
		ToolName: name, Input: input}
	m.emit(Chunk{Type: "tool-approval-request", ApprovalID: id, ToolCallID: id},
		dataChunk("interaction", id, it.interaction, false))
}

// decision records a human decision on an approval. A denied call's part
// moves to output-denied; an allowed one waits for its output.
func (m *Mapper) decision(id string, p *events.ApprovalDecisionPayload) {
	it := m.items[id]
	if it == nil || it.interaction == nil {
		return
	}
	in := it.interaction
	in.Status, in.Decision, in.Scope = InteractionAnswered, p.Decision, p.Scope
	m.emit(dataChunk("interaction", id, in, false))
	if p.Decision == "deny" && it.tool {
		it.denied = true
		m.emit(Chunk{Type: "tool-output-denied", ToolCallID: id})
	}
}
