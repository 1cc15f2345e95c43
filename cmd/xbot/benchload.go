package main

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// runTiming is one run's latencies, each from the moment its create was sent.
type runTiming struct {
	runID                        string
	accepted, firstChunk, closed time.Duration
	err                          error
}

// benchLoad is the state of one load: the results and the lag samples.
type benchLoad struct {
	b       *bench
	c       *benchClient
	timings []runTiming
	done    atomic.Int64
	failed  atomic.Int64
	began   time.Time
	lag     lagSampler
}

// drive runs --runs runs with --concurrency clients; each client creates a
// run, opens its stream right away and follows it to [DONE], then the next.
func (l *benchLoad) drive(ctx context.Context) time.Duration {
	n, conc := l.b.flags.runs, min(l.b.flags.concurrency, l.b.flags.runs)
	l.timings = make([]runTiming, n)
	next := make(chan int)
	var wg sync.WaitGroup
	l.began = time.Now()
	for client := range conc {
		wg.Go(func() {
			for i := range next {
				l.timings[i] = l.one(ctx, i, fmt.Sprintf("bench-%d", client))
				if l.timings[i].err != nil {
					l.failed.Add(1)
				}
				l.done.Add(1)
			}
		})
	}
	stop := l.watch(ctx)
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	elapsed := time.Since(l.began)
	stop()
	return elapsed
}

func (l *benchLoad) one(ctx context.Context, i int, workspace string) runTiming {
	t0 := time.Now()
	id, err := l.c.create(ctx, fmt.Sprintf("bench-%s-%d", l.b.nonce, i), workspace)
	t := runTiming{runID: id, accepted: time.Since(t0), err: err}
	if err != nil {
		return t
	}
	if t.err = l.c.follow(ctx, id, func() { t.firstChunk = time.Since(t0) }); t.err != nil {
		return t
	}
	t.closed = time.Since(t0)
	t.err = l.c.waitCompleted(ctx, id)
	return t
}

// watch samples projector lag and prints progress until stopped.
func (l *benchLoad) watch(ctx context.Context) func() {
	ctx, cancel := context.WithCancel(ctx)
	pp := newBenchProgress(os.Stderr, l.b.flags.runs)
	var wg sync.WaitGroup
	wg.Go(func() {
		// 200 ms: several samples per second of a run without loading the API.
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			pp.report(l.done.Load(), l.failed.Load(), time.Since(l.began), false)
			l.lag.sample(ctx, l.c)
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	})
	return func() {
		cancel()
		wg.Wait()
		pp.report(l.done.Load(), l.failed.Load(), time.Since(l.began), true)
	}
}

// lagSampler keeps the largest and the latest lag of every projector.
type lagSampler struct {
	mu      sync.Mutex
	max     map[string]int64
	last    map[string]int64
	samples int
	errors  int
}

func (s *lagSampler) sample(ctx context.Context, c *benchClient) {
	lags, err := c.Projectors(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.errors++
		return
	}
	if s.max == nil {
		s.max = map[string]int64{}
	}
	s.samples++
	s.last = map[string]int64{}
	for _, p := range lags {
		s.max[p.Name] = max(s.max[p.Name], p.Lag)
		s.last[p.Name] = p.Lag
	}
}

// catchUpMax bounds the wait for the views to catch up after the load.
const catchUpMax = 60 * time.Second

// catchUp samples the lag until every view's is 0 and returns how long that
// took in seconds, -1 if not within catchUpMax.
func (l *benchLoad) catchUp(ctx context.Context) float64 {
	start := time.Now()
	for time.Since(start) < catchUpMax && ctx.Err() == nil {
		if l.lag.zero() {
			return time.Since(start).Seconds()
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
		l.lag.sample(ctx, l.c)
	}
	return -1
}

func (s *lagSampler) zero() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range s.last {
		if n != 0 {
			return false
		}
	}
	return len(s.last) > 0
}
