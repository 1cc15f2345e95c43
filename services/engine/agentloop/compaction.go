package agentloop

import (
	"context"
	"encoding/json"
	"fmt"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/engine/model"
)

// Compaction. The artifact is an event of its own; no
// event is changed or deleted, and Project applies the latest artifact.

// threshold is the estimated context size (tokens) above which a run
// compacts before a model request or after tool results.
func (r *execution) threshold() int {
	return int(float64(r.ctxCfg.Window) * r.ctxCfg.CompactAt)
}

// compactIfOver compacts when the next request's context is over the threshold.
// Nothing new since the last compaction means nothing more to compact: the
// context is over the threshold on what must be kept (the input, the
// summary), and compacting again would only repeat the same call.
func (r *execution) compactIfOver(ctx context.Context, mc *modelContext, trigger string) error {
	evs := r.run.Events()
	msgs := r.project(mc.session)
	if EstimateTokens(msgs, r.specs) <= r.threshold() || !grewSinceCompaction(evs) {
		return nil
	}
	return r.compact(ctx, mc, trigger, nil)
}

// grewSinceCompaction reports whether an item event follows the run's latest
// compaction (true when there is none).
func grewSinceCompaction(evs []events.Envelope) bool {
	for i := len(evs) - 1; i >= 0; i-- {
		switch evs[i].Type {
		case events.ContextCompacted:
			return false
		case events.ItemStarted, events.ItemCompleted, events.ItemFailed:
			return true
		default:
		}
	}
	return true
}

// compactIfLarge is post_tool_result_threshold: tool results just made the
// context larger than the threshold.
func (r *execution) compactIfLarge(ctx context.Context, trigger string) error {
	if r.run.State().Status != events.StatusRunning {
		return nil
	}
	mc, err := r.modelContext(ctx)
	if err != nil || mc == nil {
		return err
	}
	return r.compactIfOver(ctx, mc, trigger)
}

// compact summarises the run's context with the model and appends the
// artifact. manual is the RequestCompaction that asked for it, if any. A
// compaction that fails leaves the context as it is: a threshold trigger
// goes on uncompacted (the model may still accept it), a manual one is
// closed as no_effect with the reason, and an overflow recovery fails the
// run, since the retry could not succeed.
func (r *execution) compact(ctx context.Context, mc *modelContext, trigger string, manual *events.PendingCommand) error {
	evs := r.run.Events()
	cutoff := r.run.State().LastSeq
	msgs := Project(r.p.SystemPrompt, mc.session, evs)
	before := EstimateTokens(msgs, r.specs)
	// The transcript itself must fit: about 3 bytes a token, within the window.
	req := CompactionRequest(mc.modelName, msgs, r.ctxCfg.Window*3*int(r.ctxCfg.CompactAt*100)/100)

	step, cancel := r.run.Step(r.wall)
	resp, err := mc.prov.Stream(step, req, func(model.Delta) {})
	interrupted := step.Err() != nil
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if interrupted {
			return nil // a cancel: the next safe point ends the run
		}
		r.log.Warn("compaction failed", zap.String("trigger", trigger), zap.Error(err))
		switch {
		case trigger == events.CompactOverflowRecovery:
			return r.fail(ctx, events.FailModelError, "the context overflowed and compacting it failed: "+model.Summary(err))
		case manual != nil:
			return r.run.Compacted(ctx, nil, manual, "compaction failed: "+err.Error())
		}
		return nil
	}
	art := events.ContextCompactedPayload{
		ArtifactID: events.NewID("cmp"), CutoffEventSeq: cutoff, TriggerReason: trigger,
		SourceRange: events.SeqRange{FromSeq: 1, ToSeq: cutoff}, Summary: ParseSummary(resp.Text),
		RetainedItemIDs: RetainedItems(evs), TokenStats: events.TokenStats{BeforeTokens: before},
	}
	if art.RetainedItemIDs == nil {
		art.RetainedItemIDs = []string{}
	}
	if resp.Usage != (model.Usage{}) {
		u := events.Usage(resp.Usage)
		art.Usage = &u
	}
	after, err := r.projectWith(evs, art, mc.session)
	if err != nil {
		return err
	}
	art.TokenStats.AfterTokens = EstimateTokens(after, r.specs)
	r.log.Info("context compacted", zap.String("trigger", trigger), zap.Int("before_tokens", before),
		zap.Int("after_tokens", art.TokenStats.AfterTokens))
	return r.run.Compacted(ctx, &art, manual, "")
}

// projectWith is the projection the run will have once art is appended.
func (r *execution) projectWith(evs []events.Envelope, art events.ContextCompactedPayload, session [][]events.Envelope) ([]model.Message, error) {
	raw, err := json.Marshal(art)
	if err != nil {
		return nil, fmt.Errorf("encode compaction artifact: %w", err)
	}
	last := evs[len(evs)-1]
	next := events.Envelope{RunID: last.RunID, Seq: last.Seq + 1, SchemaVersion: events.SchemaVersion,
		Type: events.ContextCompacted, TenantID: last.TenantID, Payload: raw}
	return Project(r.p.SystemPrompt, session, append(evs[:len(evs):len(evs)], next)), nil
}
