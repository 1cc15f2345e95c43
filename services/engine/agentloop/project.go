package agentloop

import (
	"fmt"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/engine/model"
)

// Project is the context projector: a pure function from the
// system prompt, the session's earlier runs and the run's own events to the
// messages of the next model call. The result is always a valid provider
// conversation: every tool call is followed by exactly one result, whatever
// happened to the run (a cancel, a crash, a call that never started), and
// nothing internal (ids, seq, statuses) is copied into a message.
//
// When the run has been compacted, its latest runtime.context.compacted
// artifact decides the context: the session's earlier runs
// and the run's items finished by the cutoff are replaced by the summary;
// see projectCompacted.
func Project(systemPrompt string, session [][]events.Envelope, run []events.Envelope) []model.Message {
	var msgs []model.Message
	if systemPrompt != "" {
		msgs = append(msgs, model.Message{Role: model.RoleSystem, Content: systemPrompt})
	}
	if c := latestCompaction(run); c != nil {
		return append(msgs, projectCompacted(run, c)...)
	}
	msgs = append(msgs, projectSession(session)...)
	return append(msgs, projectRun(run)...)
}

// projectSession projects the session's earlier runs, oldest first.
func projectSession(session [][]events.Envelope) []model.Message {
	var msgs []model.Message
	for _, evs := range session {
		msgs = append(msgs, projectRun(evs)...)
	}
	return msgs
}

// itemRelevant says whether items reads events of type t.
func itemRelevant(t events.Type) bool {
	switch t {
	case events.RunAccepted, events.ItemStarted, events.ItemDelta, events.ItemCompleted, events.ItemFailed,
		events.ItemAwaitingApproval:
		return true
	default:
		return false
	}
}

// items folds a run's item events, in the order the items started.
func items(evs []events.Envelope) (order []*item, byID map[string]*item, input string) {
	var f itemFold
	f.add(evs)
	return f.order, f.byID, f.input
}

// itemFold is items kept up to date as the log grows: add folds only the
// events it has not seen, so an execution that asks after every append does not
// decode the whole log each time.
type itemFold struct {
	n     int // events folded
	gen   int // counts the fold's starts over: order is another list since
	order []*item
	byID  map[string]*item
	// calls are the tool items of each response (by its item id), in the
	// order they started.
	calls map[string][]*item
	input string
	// compaction is the latest compaction artifact, nil if none.
	compaction *events.ContextCompactedPayload
}

// add folds the events of evs past the ones already folded; evs must be the
// same log, grown. A shorter log starts the fold over.
func (f *itemFold) add(evs []events.Envelope) {
	if len(evs) < f.n || f.byID == nil {
		*f = itemFold{byID: map[string]*item{}, calls: map[string][]*item{}, gen: f.gen + 1}
	}
	for _, e := range evs[f.n:] {
		if e.Type == events.ContextCompacted {
			if c := compaction(e); c != nil {
				f.compaction = c
			}
			continue
		}
		if !itemRelevant(e.Type) {
			continue // e.g. the capability snapshot: large, and nothing the projection needs
		}
		p, err := e.SharedPayload() // read only: the executor's fold may share it
		if err != nil {
			continue // the log folded when it was written; skip what this build cannot read
		}
		if v, ok := p.(*events.RunAcceptedPayload); ok {
			f.input = v.Input.Content
		}
		if st, ok := p.(*events.ItemStartedPayload); ok {
			it := &item{id: e.ItemID, typ: st.ItemType, status: events.ItemStatusStarted, content: st.Content, start: st.Data}
			f.byID[e.ItemID] = it
			f.order = append(f.order, it)
			if call, ok := it.toolCall(); ok && call.ToolCallID != "" {
				f.calls[call.ResponseItemID] = append(f.calls[call.ResponseItemID], it)
			}
		} else if it := f.byID[e.ItemID]; it != nil {
			it.apply(p)
		}
		if it := f.byID[e.ItemID]; e.ItemID != "" && it != nil {
			it.last = e.Seq
		}
	}
	f.n = len(evs)
}

// apply folds an item event other than its start into it.
func (it *item) apply(p any) {
	switch v := p.(type) {
	case *events.ItemCompletedPayload:
		it.status, it.content, it.end = events.ItemStatusCompleted, v.Content, v.Data
		it.asst, it.res = nil, nil
		if v.Status == events.ItemStatusTruncated {
			it.status = events.ItemStatusTruncated
		}
	case *events.ItemFailedPayload:
		it.status, it.errCode, it.errMsg = events.ItemStatusFailed, v.ErrorCode, v.Message
	case *events.ItemAwaitingApprovalPayload:
		it.status = events.ItemStatusAwaitingApproval
	}
}

func projectRun(evs []events.Envelope) []model.Message {
	var f itemFold
	f.add(evs)
	return projectOrder(&f)
}

// projectFolded is Project of run, whose items f has folded, in a session
// whose earlier runs project to earlier (projectSession): an execution keeps
// one fold of its run and the projection of its session (memo) instead of
// decoding the logs again.
func projectFolded(systemPrompt string, earlier []model.Message, run []events.Envelope, f *itemFold) []model.Message {
	f.add(run)
	var msgs []model.Message
	if systemPrompt != "" {
		msgs = append(msgs, model.Message{Role: model.RoleSystem, Content: systemPrompt})
	}
	if f.compaction != nil {
		return append(msgs, projectCompactedItems(f, f.compaction)...)
	}
	msgs = append(msgs, earlier...)
	return append(msgs, projectOrder(f)...)
}

// projectOrder projects a run's input and its items, which f folded.
func projectOrder(f *itemFold) []model.Message {
	var msgs []model.Message
	if f.input != "" {
		msgs = append(msgs, model.Message{Role: model.RoleUser, Content: f.input})
	}
	return append(msgs, projectItems(f.order, f.calls)...)
}

// projectItems projects the messages and responses of keep; calls are the
// run's tool items by response (itemFold), which hold the responses'
// results.
func projectItems(keep []*item, calls map[string][]*item) []model.Message {
	var msgs []model.Message
	for _, it := range keep {
		switch it.typ {
		case events.ItemUserMessage:
			if it.status == events.ItemStatusCompleted {
				msgs = append(msgs, model.Message{Role: model.RoleUser, Content: it.content})
			}
		case events.ItemAssistantMessage:
			msgs = append(msgs, assistant(it, calls[it.id])...)
		default:
			// Tool items are projected with the response that called them;
			// reasoning stays with the provider that produced it.
		}
	}
	return msgs
}

// latestCompaction is the run's latest compaction artifact, nil if none.
func latestCompaction(run []events.Envelope) *events.ContextCompactedPayload {
	for i := len(run) - 1; i >= 0; i-- {
		if c := compaction(run[i]); c != nil {
			return c
		}
	}
	return nil
}

// compaction is e's compaction artifact, nil when e is none (or does not
// decode).
func compaction(e events.Envelope) *events.ContextCompactedPayload {
	if e.Type != events.ContextCompacted {
		return nil
	}
	if p, err := e.DecodePayload(); err == nil {
		if c, ok := p.(*events.ContextCompactedPayload); ok {
			return c
		}
	}
	return nil
}

// projectCompacted projects a compacted run: its input (the user's request,
// always verbatim), the summary, the retained user messages, then the items
// not finished at the cutoff. An item is finished at the cutoff when its last
// event is at or before it, and a response only when all its tool calls are
// too: a response whose call was still running or awaiting approval is kept
// whole, with the results it got, so the model sees every call it made after
// the summary answered. The session's earlier runs are covered by the summary.
func projectCompacted(run []events.Envelope, c *events.ContextCompactedPayload) []model.Message {
	var f itemFold
	f.add(run)
	return projectCompactedItems(&f, c)
}

// projectCompactedItems is projectCompacted of the run f folded.
func projectCompactedItems(f *itemFold, c *events.ContextCompactedPayload) []model.Message {
	order, input := f.order, f.input
	open := map[string]bool{} // items not finished at the cutoff
	for _, it := range order {
		if it.last <= c.CutoffEventSeq {
			continue
		}
		open[it.id] = true
		if call, ok := it.toolCall(); ok && call.ResponseItemID != "" {
			open[call.ResponseItemID] = true
		}
	}
	var msgs []model.Message
	if input != "" {
		msgs = append(msgs, model.Message{Role: model.RoleUser, Content: input})
	}
	msgs = append(msgs, model.Message{Role: model.RoleUser, Content: RenderSummary(c.Summary)})
	retained := map[string]bool{}
	for _, id := range c.RetainedItemIDs {
		retained[id] = true
	}
	var tail []*item
	for _, it := range order {
		switch {
		case open[it.id]:
			tail = append(tail, it)
		case retained[it.id] && it.typ == events.ItemUserMessage && it.status == events.ItemStatusCompleted:
			msgs = append(msgs, model.Message{Role: model.RoleUser, Content: it.content})
		}
	}
	return append(msgs, projectItems(tail, f.calls)...)
}

// assistant projects one model response and the results of its calls,
// whose items are calls.
func assistant(it *item, calls []*item) []model.Message {
	switch it.status {
	case events.ItemStatusCompleted:
	case events.ItemStatusTruncated:
		if it.content == "" {
			return nil
		}
		return []model.Message{{Role: model.RoleAssistant, Content: it.content}}
	default:
		return nil // failed or never finished: the model call is repeated, not remembered
	}
	data := it.assistantData()
	if it.content == "" && len(data.ToolCalls) == 0 {
		return nil
	}
	msg := model.Message{Role: model.RoleAssistant, Content: it.content}
	out := []model.Message{msg}
	for _, c := range data.ToolCalls {
		out[0].ToolCalls = append(out[0].ToolCalls, model.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
		res := "error [not_executed]: this tool call did not run (the run stopped before it started)"
		for _, ci := range calls {
			if call, _ := ci.toolCall(); call.ToolCallID == c.ID {
				res = resultText(ci)
			}
		}
		out = append(out, model.Message{Role: model.RoleTool, ToolCallID: c.ID, Content: res})
	}
	return out
}

func resultText(it *item) string {
	switch it.status {
	case events.ItemStatusCompleted, events.ItemStatusTruncated:
		if res, ok := it.toolResult(); ok && res.Output != "" {
			return res.Output
		}
		return it.content
	case events.ItemStatusFailed:
		msg := it.errMsg
		if it.errCode == events.ToolErrRuntimeLost {
			msg = "the executor running this tool stopped; it is unknown whether the tool finished. " +
				"Check its effects before repeating it"
		}
		return fmt.Sprintf("error [%s]: %s", it.errCode, msg)
	case events.ItemStatusAwaitingApproval:
		return "error [not_executed]: this tool call is waiting for approval"
	}
	return "error [not_executed]: this tool call has no result yet"
}
