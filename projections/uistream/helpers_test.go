package uistream_test

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/projections/uistream"
)

// memSource is an in-memory read model: the events of each run, of which
// only the first visible[run] are readable (a projector that lags).
type memSource struct {
	mu      sync.Mutex
	logs    map[string][]events.Envelope
	visible map[string]int
	runs    []uistream.RunRef // session order
	reads   int               // calls of any method: a stream asking
}

func newMemSource() *memSource {
	return &memSource{logs: map[string][]events.Envelope{}, visible: map[string]int{}}
}

// put stores a run's log with the first n events visible.
func (s *memSource) put(evs []events.Envelope, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := evs[0].RunID
	if _, ok := s.logs[id]; !ok {
		s.runs = append(s.runs, uistream.RunRef{RunID: id, CreatedAt: time.UnixMilli(evs[0].OccurredAt)})
	}
	s.logs[id], s.visible[id] = evs, n
}

// show makes the first n events of run visible.
func (s *memSource) show(run string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.visible[run] = n
}

func (s *memSource) RunEvents(_ context.Context, runID string, afterSeq int64, limit int) ([]events.Envelope, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reads++
	vis := s.logs[runID][:s.visible[runID]]
	var out []events.Envelope
	for _, e := range vis {
		if e.Seq > afterSeq && len(out) < limit {
			out = append(out, e)
		}
	}
	return out, nil
}

func (s *memSource) readCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reads
}

// showAfterRereads makes the first n events of run visible once the source
// was read twice more: a projector that catches up only after a stream
// found it behind.
func (s *memSource) showAfterRereads(ctx context.Context, run string, n int) {
	reads := s.readCount()
	for s.readCount() < reads+2 {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Millisecond): // poll interval
		}
	}
	s.show(run, n)
}

// ended reports whether the visible part of run includes its end.
func (s *memSource) ended(run string) bool {
	for _, e := range s.logs[run][:s.visible[run]] {
		if to, ok := events.StatusAfter(e.Type); ok && to.Terminal() {
			return true
		}
	}
	return false
}

func (s *memSource) listed() []uistream.RunRef {
	var out []uistream.RunRef
	for _, r := range s.runs {
		if s.visible[r.RunID] > 0 {
			r.Ended = s.ended(r.RunID)
			out = append(out, r)
		}
	}
	return out
}

func (s *memSource) SessionRuns(_ context.Context, after uistream.RunRef, limit int) ([]uistream.RunRef, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reads++
	var out []uistream.RunRef
	for _, r := range s.listed() {
		later := r.CreatedAt.After(after.CreatedAt) || (r.CreatedAt.Equal(after.CreatedAt) && r.RunID > after.RunID)
		if later && len(out) < limit {
			out = append(out, r)
		}
	}
	return out, nil
}

func (s *memSource) SessionRun(_ context.Context, runID string) (uistream.RunRef, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reads++
	for _, r := range s.listed() {
		if r.RunID == runID {
			return r, nil
		}
	}
	return uistream.RunRef{}, uistream.ErrNotInSession
}

func (s *memSource) SessionHead(context.Context) (uistream.RunRef, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reads++
	runs := s.listed()
	for _, r := range runs {
		if !r.Ended {
			return r, true, nil
		}
	}
	if len(runs) == 0 {
		return uistream.RunRef{}, false, nil
	}
	return runs[len(runs)-1], true, nil
}

// memSink collects what a stream writes.
type memSink struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *memSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *memSink) Flush() error                     { return nil }
func (s *memSink) SetWriteDeadline(time.Time) error { return nil }

func (s *memSink) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// frames is the output without keep-alive comments.
func (s *memSink) frames() string { return strings.ReplaceAll(s.String(), ": keep-alive\n\n", "") }

func (s *memSink) waitFor(t *testing.T, sub string) {
	t.Helper()
	eventually.Holds(t, untilTimeout, "output "+sub, func() bool { return strings.Contains(s.String(), sub) })
}

// gatedSink is a memSink whose writes block while its gate is closed: a
// client that stopped reading.
type gatedSink struct {
	memSink
	gmu  sync.Mutex
	gate chan struct{} // closed while writes may proceed
}

func newGatedSink() *gatedSink {
	g := &gatedSink{gate: make(chan struct{})}
	close(g.gate)
	return g
}

func (g *gatedSink) Write(p []byte) (int, error) {
	g.gmu.Lock()
	gate := g.gate
	g.gmu.Unlock()
	<-gate
	return g.memSink.Write(p)
}

func (g *gatedSink) close() {
	g.gmu.Lock()
	defer g.gmu.Unlock()
	g.gate = make(chan struct{})
}

func (g *gatedSink) open() {
	g.gmu.Lock()
	defer g.gmu.Unlock()
	close(g.gate)
}

// untilTimeout bounds every wait for a hub or a sink on a loaded machine.
const untilTimeout = 10 * time.Second

func sseIDs(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if id, ok := strings.CutPrefix(l, "id: "); ok {
			out = append(out, id)
		}
	}
	return out
}

func newHub(t testing.TB, buffer int) *uistream.Hub {
	t.Helper()
	h, err := uistream.NewHub(uistream.HubConfig{Buffer: buffer, Logger: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	return h
}

func newStreamer(t testing.TB, h *uistream.Hub, cfg uistream.StreamConfig) *uistream.Streamer {
	t.Helper()
	cfg.Logger = zaptest.NewLogger(t)
	s, err := uistream.NewStreamer(cfg, h)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
