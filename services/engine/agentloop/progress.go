package agentloop

import (
	"maps"

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
		started = p.item(it, started)
	}
	p.unstartedCalls(started)
	return p
}

// item folds one item into p; started are the tool call ids with an item
// for p.last, which it returns, anew after a response.
func (p *progress) item(it *item, started map[string]bool) map[string]bool {
	switch it.typ {
	case events.ItemAssistantMessage:
		if it.status != events.ItemStatusCompleted && it.status != events.ItemStatusTruncated {
			return started
		}
		p.turns++
		p.last = &response{itemID: it.id, text: it.content, calls: it.assistantData().ToolCalls}
		p.inputAfter = false
		return map[string]bool{}
	case events.ItemUserMessage:
		p.inputAfter = true
	default:
		call, ok := it.toolCall()
		if !ok || call.ToolCallID == "" {
			return started
		}
		p.toolCalls++
		if p.last != nil && call.ResponseItemID == p.last.itemID {
			started[call.ToolCallID] = true
		}
	}
	return started
}

// unstartedCalls sets p.unstarted from p.last's calls without an item.
func (p *progress) unstartedCalls(started map[string]bool) {
	if p.last == nil {
		return
	}
	for _, c := range p.last.calls {
		if !started[c.ID] {
			p.unstarted = append(p.unstarted, c)
		}
	}
}

// analysis is analyzeItems kept from one call to the next, for a log that
// only grows (an execution's). An item changes only while it is open, so
// the items up to the first open one are folded once (settled, with the
// progress and started ids after them), and each call folds from there;
// the events' timing is folded on from the last one seen. A call costs what
// the log added and the items still open, not the length of the run.
type analysis struct {
	gen      int // the item fold's generation the items were folded from
	settled  int
	base     progress
	started  map[string]bool
	seen     int   // events timed
	pausedAt int64 // of a pause still open among them
}

// at returns analyzeItems(f.order, evs) for f folded from evs.
func (a *analysis) at(f *itemFold, evs []events.Envelope) progress {
	if a.gen != f.gen || a.settled > len(f.order) || a.seen > len(evs) {
		*a = analysis{gen: f.gen, started: map[string]bool{}}
	}
	for _, e := range evs[a.seen:] {
		a.pausedAt = a.base.time(e, a.pausedAt)
	}
	a.seen = len(evs)
	for ; a.settled < len(f.order) && closed(f.order[a.settled]); a.settled++ {
		a.started = a.base.item(f.order[a.settled], a.started)
	}
	p, started := a.base, maps.Clone(a.started) // the open items' fold is not kept
	for _, it := range f.order[a.settled:] {
		started = p.item(it, started)
	}
	p.unstartedCalls(started)
	return p
}

// closed reports whether the item is closed: it changes no more.
func closed(it *item) bool {
	switch it.status {
	case events.ItemStatusCompleted, events.ItemStatusFailed, events.ItemStatusTruncated:
		return true
	}
	return false
}

// timing returns when the run started and how long it was paused (ms); a
// pause still open does not count.
func timing(evs []events.Envelope) (startedAt, pausedMs int64) {
	var p progress
	var pausedAt int64
	for _, e := range evs {
		pausedAt = p.time(e, pausedAt)
	}
	return p.startedAt, p.pausedMs
}

// time folds event e into p's start and paused time; pausedAt is when an
// open pause began (0: none), which it returns as e leaves it.
func (p *progress) time(e events.Envelope, pausedAt int64) int64 {
	switch {
	case e.Type == events.RunStarted && p.startedAt == 0:
		p.startedAt = e.OccurredAt
	case e.Type == events.RunPaused:
		return e.OccurredAt
	case e.Type == events.RunResumed && pausedAt > 0:
		p.pausedMs += max(0, e.OccurredAt-pausedAt)
		return 0
	}
	return pausedAt
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
	analysis    analysis
	progressLen int
	progress    progress
	projectLen  int
	project     []model.Message
	// session is the projection of the session's earlier runs, which an
	// execution reads once (sessionHistory); sessionOf is what it projected.
	session     []model.Message
	sessionOf   [][]events.Envelope
	sessionMade bool
}

// progress is analyze of the run's current events.
func (r *execution) progress() progress {
	evs := r.run.Events()
	if r.memo.progressLen != len(evs) || len(evs) == 0 {
		r.memo.fold.add(evs)
		r.memo.progress, r.memo.progressLen = r.memo.analysis.at(&r.memo.fold, evs), len(evs)
	}
	return r.memo.progress
}

// project is the context projection of the run's current events. The
// result must not be modified.
func (r *execution) project(session [][]events.Envelope) []model.Message {
	evs := r.run.Events()
	if r.memo.projectLen != len(evs) || len(evs) == 0 {
		r.memo.project, r.memo.projectLen = projectFolded(r.p.SystemPrompt, r.sessionProjection(session), evs, &r.memo.fold), len(evs)
	}
	return r.memo.project
}

// sessionProjection is projectSession(session), projected once per
// execution: the earlier runs do not change, and each projection of the run
// would otherwise decode their logs again.
func (r *execution) sessionProjection(session [][]events.Envelope) []model.Message {
	same := len(session) == len(r.memo.sessionOf) && (len(session) == 0 || &session[0] == &r.memo.sessionOf[0])
	if !same || !r.memo.sessionMade {
		r.memo.session, r.memo.sessionOf, r.memo.sessionMade = projectSession(session), session, true
	}
	return r.memo.session
}
