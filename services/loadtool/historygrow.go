package loadtool

import (
	"context"
	"sync"
	"time"
)

// defaultEventsPerRun guesses a run's events until the first runs ended.
const defaultEventsPerRun = 8

// Grow submits runs until at least target events were committed since the
// builder started, keeping at most Window runs not ended, and returns once
// every run it submitted has ended. Runs that end other than completed
// count too: they are history as well (Runs says how many).
func (b *HistoryBuilder) Grow(ctx context.Context, target int64) error {
	stop := b.progress(target)
	defer stop()
	for {
		evs, pending, _ := b.w.counts()
		need := b.toSubmit(target)
		switch {
		case need == 0 && pending == 0 && evs >= target:
			return nil
		case need > 0 && pending < b.cfg.Window:
			if _, err := b.Submit(ctx, min(need, b.cfg.Window-pending)); err != nil {
				return err
			}
			continue
		}
		err := b.w.until(ctx, func() bool { return b.w.events != evs || len(b.w.pending) != pending })
		if err != nil {
			return err
		}
	}
}

// toSubmit is how many more runs are likely needed to reach target events.
func (b *HistoryBuilder) toSubmit(target int64) int {
	expected, perRun := b.w.expected()
	if expected >= float64(target) {
		return 0
	}
	return int((float64(target)-expected)/max(1, perRun)) + 1
}

// progress reports Grow's progress every half second until stopped.
func (b *HistoryBuilder) progress(target int64) func() {
	if b.cfg.Progress == nil {
		return func() {}
	}
	began, from := time.Now(), b.Events()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				b.cfg.Progress(from, b.Events(), target, time.Since(began), false)
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
		b.cfg.Progress(from, b.Events(), target, time.Since(began), true)
	}
}

// Pending returns how many submitted runs have not ended yet.
func (b *HistoryBuilder) Pending() int {
	_, pending, _ := b.w.counts()
	return pending
}

// Sustain keeps inFlight runs submitted and not ended, submitting more as
// runs end, until ctx ends; it returns the ids of the runs it submitted
// (some may still be running: AwaitEnded waits for them).
func (b *HistoryBuilder) Sustain(ctx context.Context, inFlight int) ([]string, error) {
	var ids []string
	for {
		err := b.w.until(ctx, func() bool { return len(b.w.pending) < inFlight })
		if err != nil {
			return ids, nil //nolint:nilerr // ctx ended: that is how Sustain stops
		}
		// A submit that began finishes, so every id returned was produced.
		got, err := b.Submit(context.WithoutCancel(ctx), inFlight-b.Pending())
		ids = append(ids, got...)
		if err != nil {
			return ids, err
		}
	}
}
