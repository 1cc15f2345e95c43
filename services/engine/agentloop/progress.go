package agentloop

import (
	"github.com/xbot-runtime/xbot/services/engine/model"

	"github.com/xbot-runtime/xbot/events"
)

// progress is where a run stands, derived from its events alone. The engine
// decides its next stage from it, which is what makes a run resumable by any
// executor at any point: nothing the engine knows lives only in memory.
type progress struct {
	startedAt int64 // occurredAt of runtime.run.started (ms)
	pausedMs  int64 // time spent paused (ms), a pause still open not counted
	turns     int   // model calls that returned a response
	toolCalls int   // tool items started
	// last is the latest completed model response, nil before the first.
	last *response
	// unstarted are last's tool calls that have no item yet, in call order.
	unstarted []events.ToolCallRef
	// inputAfter says user input arrived after last.
	inputAfter bool
}

type response struct {
	itemID string
	text   string
	calls  []events.ToolCallRef
}

// final says the run's work is done: the last response asked for nothing and
// no input came after it.
func (p progress) final() bool {
	return p.last != nil && len(p.last.calls) == 0 && !p.inputAfter
}

func analyze(evs []events.Envelope) progress {
	var f itemFold
	f.add(evs)
	return analyzeItems(f.order, evs)
}

// analyzeItems is analyze given the log's items (itemFold).
func analyzeItems(order []*item, evs []events.Envelope) progress {
	var p progress
	p.startedAt, p.pausedMs = timing(evs)
	started := map[string]bool{} // tool call ids with an item, for the last response
	for _, it := range order {
		switch it.typ {
		case events.ItemAssistantMessage:
			if it.status != events.ItemStatusCompleted && it.status != events.ItemStatusTruncated {
				continue
			}
			p.turns++
			p.last = &response{itemID: it.id, text: it.content, calls: it.assistantData().ToolCalls}
			p.inputAfter = false
			started = map[string]bool{}
		case events.ItemUserMessage:
			p.inputAfter = true
		default:
			call, ok := it.toolCall()
			if !ok || call.ToolCallID == "" {
				continue
			}
			p.toolCalls++
			if p.last != nil && call.ResponseItemID == p.last.itemID {
				started[call.ToolCallID] = true
			}
		}
	}
	if p.last != nil {
		for _, c := range p.last.calls {
			if !started[c.ID] {
				p.unstarted = append(p.unstarted, c)
			}
		}
	}
	return p
}

// timing returns when the run started and how long it was paused (ms); a
// pause still open does not count.
func timing(evs []events.Envelope) (startedAt, pausedMs int64) {
	var pausedAt int64
	for _, e := range evs {
		switch {
		case e.Type == events.RunStarted && startedAt == 0:
			startedAt = e.OccurredAt
		case e.Type == events.RunPaused:
			pausedAt = e.OccurredAt
		case e.Type == events.RunResumed && pausedAt > 0:
			pausedMs += max(0, e.OccurredAt-pausedAt)
			pausedAt = 0
		}
	}
	return startedAt, pausedMs
}

// toolItemID is the item id of a tool call: derived from the response and
// the call, so the same call can never be started twice (the state machine
// refuses a second item.started with the same id).
func toolItemID(responseItemID, callID string) string {
	return events.DerivedID("itm", "tool", responseItemID, callID)
}

// memo caches what the execution derives from the run's events, by the number
// of events: the log only grows while an engine drives the run, so the same
// length means the same events. One loop iteration asks for the progress and
// the projection several times; each derivation reads the whole log.
type memo struct {
	fold        itemFold
	progressLen int
	progress    progress
	projectLen  int
	project     []model.Message
}

// progress is analyze of the run's current events.
func (r *execution) progress() progress {
	evs := r.run.Events()
	if r.memo.progressLen != len(evs) || len(evs) == 0 {
		r.memo.fold.add(evs)
		r.memo.progress, r.memo.progressLen = analyzeItems(r.memo.fold.order, evs), len(evs)
	}
	return r.memo.progress
}

// project is the context projection of the run's current events. The
// result must not be modified.
func (r *execution) project(session [][]events.Envelope) []model.Message {
	evs := r.run.Events()
	if r.memo.projectLen != len(evs) || len(evs) == 0 {
		r.memo.project, r.memo.projectLen = projectFolded(r.p.SystemPrompt, session, evs, &r.memo.fold), len(evs)
	}
	return r.memo.project
}
