package runner

import (
	"context"
	"math/rand/v2"
	"time"

	"go.uber.org/zap"
)

// pending is a polled record on its way into the view. bad is set when it
// is known to be poison before any Apply (undecodable).
type pending struct {
	rec   Record
	topic string
	bad   *PoisonError
}

// project applies batch, retrying with backoff for as long as it fails; it
// returns only when every record is applied or dead-lettered (nil), or when
// ctx ended first (ctx's error).
func (r *Runner) project(ctx context.Context, batch []pending) error {
	backoff := r.cfg.RetryInitial
	for attempt := 1; ; attempt++ {
		rest, err := r.applyBatch(ctx, batch)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		r.log.Warn("projection failed; retrying", zap.Int("attempt", attempt), zap.Int("records", len(rest)),
			zap.Duration("backoff", backoff), zap.Error(err))
		if !sleep(ctx, jitter(backoff)) {
			return ctx.Err()
		}
		backoff = min(backoff*2, r.cfg.RetryMax)
		batch = rest
	}
}

// applyBatch dead-letters the records known to be poison, applies the rest
// as one batch and, when that fails, record by record, so that one poison
// record cannot hold back the records of other runs. On error it returns the
// records still to be applied, in their order.
func (r *Runner) applyBatch(ctx context.Context, batch []pending) ([]pending, error) {
	kept := make([]pending, 0, len(batch))
	for i, p := range batch {
		pe := r.poisonBefore(p)
		if pe == nil {
			kept = append(kept, p)
			continue
		}
		if err := r.deadLetter(p, pe); err != nil {
			return append(kept, batch[i:]...), err
		}
	}
	if len(kept) == 0 {
		return nil, nil
	}
	recs := make([]Record, len(kept))
	for i, p := range kept {
		recs[i] = p.rec
	}
	if r.cfg.Projector.Apply(ctx, recs) == nil {
		return nil, nil
	}
	return r.applyOneByOne(ctx, kept)
}

// applyOneByOne applies records in order. A record that fails for a
// transient reason stops the loop (it and the records after it are retried,
// never skipped); a poison record is dead-lettered and the later records of
// its run are poison as well.
func (r *Runner) applyOneByOne(ctx context.Context, batch []pending) ([]pending, error) {
	for i, p := range batch {
		pe := r.poisonBefore(p)
		if pe == nil {
			err := r.cfg.Projector.Apply(ctx, []Record{p.rec})
			if err == nil {
				continue
			}
			var poison bool
			if pe, poison = IsPoison(err); !poison {
				return batch[i:], err
			}
		}
		if err := r.deadLetter(p, pe); err != nil {
			return batch[i:], err
		}
		// Only once its dead letter is written, so that a runner started now
		// (which learns stopped runs from the dead letters) agrees; still
		// before the next record, which may be of the same run.
		r.markStopped(pe.RunID, pe.Seq)
	}
	return nil, nil
}

// poisonBefore returns why p is poison without applying it, or nil.
func (r *Runner) poisonBefore(p pending) *PoisonError {
	if p.bad != nil {
		return p.bad
	}
	if at, ok := r.isStopped(p.rec.Event.RunID); ok {
		return Poison(p.rec, stoppedReason(at))
	}
	return nil
}

// jitter spreads retries of many projectors by ±20 %.
func jitter(d time.Duration) time.Duration {
	return time.Duration(float64(d) * (0.8 + 0.4*rand.Float64())) //nolint:gosec // timing jitter, not security
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
