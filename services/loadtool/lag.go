package loadtool

import (
	"context"
	"sync"
	"time"
)

// lagSampler keeps the largest and the latest lag of every projector.
type lagSampler struct {
	// views are the projectors the system runs: a view has caught up only
	// once it has reported a lag, and a lingering view (the ClickHouse
	// audit) reports its first only when its first fetch returns.
	views   []string
	mu      sync.Mutex
	max     map[string]int64
	last    map[string]int64
	samples int
	errors  int
}

// sample reads the views' lag from the system's metrics (metricLags).
func (s *lagSampler) sample() {
	lags, err := metricLags()
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
	for name, lag := range lags {
		s.max[name] = max(s.max[name], lag)
		s.last[name] = lag
	}
}

// catchUpMax bounds the wait for the views to catch up after the load.
const catchUpMax = 60 * time.Second

// catchUp samples the lag until every view's is 0 and returns how long that
// took in seconds, -1 if not within catchUpMax.
func (l *load) catchUp(ctx context.Context) float64 {
	start := time.Now()
	for time.Since(start) < catchUpMax && ctx.Err() == nil {
		if l.lag.zero() {
			return time.Since(start).Seconds()
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
		l.lag.sample()
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
	for _, v := range s.views {
		if _, ok := s.last[v]; !ok {
			return false
		}
	}
	return len(s.last) > 0
}
