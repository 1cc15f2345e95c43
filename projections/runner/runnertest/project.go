package runnertest

import (
	"context"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/projections/runner"
)

// projectTimeout bounds one Project: far above the seconds a benchmark's
// records take on a loaded 2-core machine, so only a hang trips it.
const projectTimeout = 5 * time.Minute

// Timing is what Project measured.
type Timing struct {
	// Startup is from Run to the first Apply: the consumer group's join and
	// the first fetch.
	Startup time.Duration
	// Apply is from the start of the first Apply to the return of the one
	// that applied the last record: records from Kafka to committed writes,
	// runner included.
	Apply time.Duration
	// Batches counts the Apply calls.
	Batches int
}

// Project runs a runner of p on kc's events topic until p has applied want
// records, and times it.
func Project(tb testing.TB, kc kafka.Config, p runner.Projector, want int) Timing {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), projectTimeout)
	defer cancel()
	w := &watch{Projector: p, want: want, done: make(chan struct{})}
	r, err := runner.New(ctx, runner.Config{Kafka: kc, Projector: w, Logger: zap.NewNop()})
	if err != nil {
		tb.Fatal(err)
	}
	rctx, stop := context.WithCancel(ctx)
	ran := make(chan error, 1)
	began := time.Now()
	go func() { ran <- r.Run(rctx) }()
	select {
	case <-w.done:
	case err := <-ran:
		tb.Fatalf("runner stopped after %d of %d records: %v", w.count(), want, err)
	case <-ctx.Done():
		tb.Fatalf("%d of %d records applied in %s", w.count(), want, projectTimeout)
	}
	stop()
	if err := <-ran; err != nil {
		tb.Fatal(err)
	}
	return Timing{Startup: w.first.Sub(began), Apply: w.last.Sub(w.first), Batches: w.batches}
}

// watch times the Apply calls of a projector until want records applied.
type watch struct {
	runner.Projector
	want int
	done chan struct{}

	mu          sync.Mutex
	n, batches  int
	first, last time.Time
}

func (w *watch) Apply(ctx context.Context, batch []runner.Record) error {
	began := time.Now()
	err := w.Projector.Apply(ctx, batch)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.first.IsZero() {
		w.first = began
	}
	if err != nil || w.n >= w.want {
		return err
	}
	w.n += len(batch)
	w.batches++
	if w.n >= w.want {
		w.last = time.Now()
		close(w.done)
	}
	return nil
}

func (w *watch) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n
}
