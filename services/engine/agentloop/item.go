package agentloop

import (
	"encoding/json"

	"github.com/xbot-runtime/xbot/events"
)

// item is what the projector knows of one item.
type item struct {
	id      string
	typ     events.ItemType
	status  string // started | completed | truncated | failed | awaiting_approval
	content string // started content, then final content
	start   json.RawMessage
	end     json.RawMessage
	errCode string
	errMsg  string
	last    int64 // seq of the item's latest event
	// What start and end hold, decoded once: the item is read at every
	// stage and its events do not change once folded.
	call    *events.ToolCallData   // nil until decoded; see toolCall
	callErr bool                   // start is not a ToolCallData
	asst    *events.AssistantData  // see assistantData
	res     *events.ToolResultData // see toolResult
}

// toolCall is the ToolCallData the item started with; ok is false when it
// has none.
func (it *item) toolCall() (call events.ToolCallData, ok bool) {
	if it.start == nil || it.callErr {
		return call, false
	}
	if it.call == nil {
		if events.Unmarshal(it.start, &call) != nil {
			it.callErr = true
			return call, false
		}
		it.call = &call
	}
	return *it.call, true
}

// assistantData is the AssistantData the item ended with (zero if none).
func (it *item) assistantData() events.AssistantData {
	if it.asst == nil {
		var d events.AssistantData
		_ = events.Unmarshal(it.end, &d)
		it.asst = &d
	}
	return *it.asst
}

// toolResult is the ToolResultData the item ended with; ok is false when
// it has none.
func (it *item) toolResult() (events.ToolResultData, bool) {
	if it.res == nil {
		var r events.ToolResultData
		if events.Unmarshal(it.end, &r) != nil {
			return r, false
		}
		it.res = &r
	}
	return *it.res, true
}
