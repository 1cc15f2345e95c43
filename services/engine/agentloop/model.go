package agentloop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/metrics"
	"github.com/xbot-runtime/xbot/services/engine/model"
	"github.com/xbot-runtime/xbot/services/executor"
)

// modelStage runs before_model_request, one model call and
// after_model_response.
func (r *execution) modelStage(ctx context.Context) error {
	ctx, end := stage(ctx, metrics.StageModel)
	defer end()
	// before_model_request: a cancel ends the run before tokens are spent;
	// steers become user messages of this request.
	if stop, err := r.run.SafePoint(ctx, executor.BeforeModelRequest, executor.SafePointOptions{}); err != nil || stop {
		return stopOr(err)
	}
	pr := r.progress()
	if pr.turns >= r.limits.MaxTurns {
		return r.budget(ctx, fmt.Sprintf("the run reached its limit of %d model calls", r.limits.MaxTurns))
	}
	mc, err := r.modelContext(ctx)
	if err != nil || mc == nil {
		return err
	}
	// Compaction before the request: asked for (manual_compact), or the
	// context grew past its share of the window.
	if pc, ok := r.run.PendingCompaction(); ok {
		if err := r.compact(ctx, mc, events.CompactManual, &pc); err != nil {
			return err
		}
	} else if err := r.compactIfOver(ctx, mc, events.CompactBeforeModelRequest); err != nil {
		return err
	}
	for attempt := 0; ; attempt++ {
		retry, err := r.callModel(ctx, mc, pr, attempt)
		if err != nil || !retry {
			return err
		}
	}
}

// modelContext is what a model call needs beyond the run's events.
type modelContext struct {
	prov      model.Provider
	modelName string
	session   [][]events.Envelope
}

// modelContext resolves the model and the session's history. It returns
// nil when the run ended (failed) instead.
func (r *execution) modelContext(ctx context.Context) (*modelContext, error) {
	prov, modelName, err := r.e.cfg.Models(r.p)
	if err != nil {
		return nil, r.fail(ctx, events.FailModelError, "model is not configured: "+err.Error())
	}
	session, err := r.sessionHistory(ctx)
	if err != nil {
		return nil, err // the history exists in Kafka; failing to read it is an infrastructure error
	}
	if r.run.State().Status != events.StatusRunning {
		return nil, errStop
	}
	return &modelContext{prov: prov, modelName: modelName, session: session}, nil
}

// callModel makes one model call and its after_model_response. It returns
// retry=true after a context overflow it recovered from by compacting
// (once: a second overflow fails the run).
func (r *execution) callModel(ctx context.Context, mc *modelContext, pr progress, attempt int) (retry bool, err error) {
	req := model.Request{Model: mc.modelName, Messages: r.project(mc.session),
		Tools: r.specs, Turn: pr.turns, Attempt: attempt}

	step, cancel := r.run.Step(r.wall)
	s := newStreamer(ctx, r)
	called := modelCall(ctx)
	resp, callErr := mc.prov.Stream(step, req, s.onDelta)
	called(callErr)
	// Whether a cancel interrupted the call, read before cancel() below
	// makes every step look interrupted.
	interrupted := step.Err() != nil
	cancel()
	if err := s.flush(); err != nil {
		return false, err
	}
	switch {
	case callErr == nil:
		if err := s.complete(resp, pr.turns); err != nil {
			return false, err
		}
	case ctx.Err() != nil:
		return false, ctx.Err() // this executor stops; the next owner repeats the call
	case r.wall.Err() != nil:
		if err := s.close(events.ItemStatusTruncated, resp); err != nil {
			return false, err
		}
		return false, r.budget(ctx, fmt.Sprintf("the run exceeded its wall time of %s", r.limits.MaxWallTime))
	case interrupted:
		// A cancel interrupted the stream: keep what was said, as truncated.
		if err := s.close(events.ItemStatusTruncated, resp); err != nil {
			return false, err
		}
	default:
		// The provider's text stays in the operator log: it can echo the
		// key or the prompt; the run's events carry only a summary.
		r.log.Warn("model call failed", zap.Error(callErr))
		msg := model.Summary(callErr)
		if err := s.abandon(events.FailModelError, msg); err != nil {
			return false, err
		}
		if errors.Is(callErr, model.ErrContextOverflow) {
			if attempt == 0 {
				// context_overflow_recovery: compact, then retry once.
				if err := r.compact(ctx, mc, events.CompactOverflowRecovery, nil); err != nil {
					return false, err
				}
				return r.run.State().Status == events.StatusRunning, nil
			}
			msg = "the conversation no longer fits the model's context window, even compacted: " + msg
		}
		return false, r.fail(ctx, events.FailModelError, msg)
	}
	// after_model_response: a cancel now records the calls the model asked
	// for as cancelled, so the history stays valid for a follow-up.
	pr = r.progress()
	if stop, err := r.run.SafePoint(ctx, executor.AfterModelResponse,
		executor.SafePointOptions{Unstarted: r.cancelledCalls(pr)}); err != nil || stop {
		return false, stopOr(err)
	}
	return false, nil
}

func (r *execution) fail(ctx context.Context, code, msg string) error {
	if err := r.run.Fail(ctx, code, msg); err != nil {
		return err
	}
	return errStop
}

// streamer turns a model stream into items: a reasoning item while the model
// reasons, an assistant_message item for its text (always, as the carrier of
// the response's tool calls), deltas coalesced by time and size.
type streamer struct {
	ctx context.Context
	r   *execution
	// err is the first append error; the stream keeps draining, nothing more is appended.
	err error

	reasoningID, assistantID string
	reasoning, text          string
	cur                      string // item receiving deltas
	curSent                  bool   // a delta of cur was appended
	buf                      string
	lastFlush                int64 // unix ms
}

func newStreamer(ctx context.Context, r *execution) *streamer {
	return &streamer{ctx: ctx, r: r, lastFlush: nowMs()}
}

func (s *streamer) onDelta(d model.Delta) {
	if d.Reasoning != "" {
		if s.reasoningID == "" && s.assistantID == "" {
			s.reasoningID = events.NewID("itm")
			s.start(s.reasoningID, events.ItemReasoning)
		}
		s.reasoning += d.Reasoning
		if s.cur == s.reasoningID {
			s.push(d.Reasoning)
		}
	}
	if d.Text != "" {
		s.ensureAssistant()
		s.text += d.Text
		s.push(d.Text)
	}
}

func (s *streamer) ensureAssistant() {
	if s.assistantID != "" {
		return
	}
	if s.reasoningID != "" {
		s.flushNow()
		s.appendDrafts(events.Draft{Type: events.ItemCompleted, ItemID: s.reasoningID, Payload: events.ItemCompletedPayload{
			ItemType: events.ItemReasoning, Status: events.ItemStatusCompleted, Content: s.reasoning}})
	}
	s.assistantID = events.NewID("itm")
	s.start(s.assistantID, events.ItemAssistantMessage)
}

func (s *streamer) start(id string, t events.ItemType) {
	s.flushNow()
	s.appendDrafts(events.Draft{Type: events.ItemStarted, ItemID: id, Payload: events.ItemStartedPayload{ItemType: t}})
	s.cur, s.curSent = id, false
}

func (s *streamer) push(text string) {
	if s.r.overEventBudget() {
		return // the item's closing event keeps the text; the run fails after this response
	}
	s.buf += text
	// The item's first text goes out at once; later text is coalesced.
	if !s.curSent || len(s.buf) >= s.r.e.cfg.FlushBytes || nowMs()-s.lastFlush >= s.r.e.cfg.FlushInterval.Milliseconds() {
		s.flushNow()
	}
}

// flushNow appends the buffered text as a delta of the current item. Nothing
// waits for a delta's commit: it joins the partition's next transaction.
func (s *streamer) flushNow() {
	if s.buf != "" && s.cur != "" && s.err == nil {
		s.err = s.r.run.Post(s.ctx, events.Draft{Type: events.ItemDelta, ItemID: s.cur, Payload: events.ItemDeltaPayload{Delta: s.buf}})
		s.curSent = true
	}
	s.buf, s.lastFlush = "", nowMs()
}

// appendDrafts appends the response's items without waiting for their
// commit: no side effect starts and no client is answered on them; the
// tool call's start or the run's end that follows waits for them.
func (s *streamer) appendDrafts(drafts ...events.Draft) {
	if s.err != nil {
		return
	}
	_, s.err = s.r.run.Append(s.ctx, executor.AppendOptions{NoWait: true}, drafts...)
}

func (s *streamer) flush() error {
	s.flushNow()
	return s.err
}

// complete closes the items of a finished response.
func (s *streamer) complete(resp model.Response, turn int) error {
	s.ensureAssistant()
	data := events.AssistantData{Turn: turn, FinishReason: resp.FinishReason, Model: resp.Model}
	if resp.Usage != (model.Usage{}) {
		u := events.Usage(resp.Usage)
		data.Usage = &u
	}
	for _, c := range resp.ToolCalls {
		data.ToolCalls = append(data.ToolCalls, events.ToolCallRef{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return err
	}
	text := s.text
	if resp.Text != "" {
		text = resp.Text // the provider's assembled text is authoritative
	}
	s.appendDrafts(events.Draft{Type: events.ItemCompleted, ItemID: s.assistantID, Payload: events.ItemCompletedPayload{
		ItemType: events.ItemAssistantMessage, Status: events.ItemStatusCompleted, Content: text, Data: raw}})
	return s.err
}

// close closes an interrupted response with status (truncated): the text
// streamed so far stays, tool calls are not taken.
func (s *streamer) close(status string, _ model.Response) error {
	var drafts []events.Draft
	if s.reasoningID != "" && s.assistantID == "" {
		drafts = append(drafts, events.Draft{Type: events.ItemCompleted, ItemID: s.reasoningID, Payload: events.ItemCompletedPayload{
			ItemType: events.ItemReasoning, Status: status, Content: s.reasoning}})
	}
	if s.assistantID != "" {
		drafts = append(drafts, events.Draft{Type: events.ItemCompleted, ItemID: s.assistantID, Payload: events.ItemCompletedPayload{
			ItemType: events.ItemAssistantMessage, Status: status, Content: s.text}})
	}
	if len(drafts) > 0 {
		s.appendDrafts(drafts...)
	}
	return s.err
}

// abandon fails the open items of a failed call.
func (s *streamer) abandon(code, msg string) error {
	var drafts []events.Draft
	if s.reasoningID != "" && s.assistantID == "" {
		drafts = append(drafts, events.Draft{Type: events.ItemFailed, ItemID: s.reasoningID,
			Payload: events.ItemFailedPayload{ItemType: events.ItemReasoning, ErrorCode: code, Message: msg}})
	}
	if s.assistantID != "" {
		drafts = append(drafts, events.Draft{Type: events.ItemFailed, ItemID: s.assistantID,
			Payload: events.ItemFailedPayload{ItemType: events.ItemAssistantMessage, ErrorCode: code, Message: msg}})
	}
	if len(drafts) > 0 {
		s.appendDrafts(drafts...)
	}
	return s.err
}
