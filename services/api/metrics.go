package api

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/xbot-runtime/xbot/infra/metrics"
	"github.com/xbot-runtime/xbot/projections/uistream"
)

// routeNote carries the route template the mux matched out to
// observeRequests, which sees the request before the mux does.
type routeNote struct {
	mu      sync.Mutex
	pattern string
}

type routeNoteKey struct{}

// observeRequests records every request's latency by route template and
// status code (xbot_http_request_seconds). Paths never become labels: they
// hold run ids.
func observeRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		note := &routeNote{}
		rec := &statusRecorder{ResponseWriter: w}
		defer func() {
			status := rec.status
			if status == 0 {
				status = http.StatusOK
			}
			note.mu.Lock()
			defer note.mu.Unlock()
			metrics.ObserveRequest(note.pattern, status, start)
		}()
		next.ServeHTTP(rec, r.WithContext(context.WithValue(r.Context(), routeNoteKey{}, note)))
	})
}

// noteRoute wraps the mux: once it has served a request, the pattern it
// matched ("POST /v1/runs/{runId}/cancel") is the request's route.
func noteRoute(mux http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mux.ServeHTTP(w, r)
		if note, ok := r.Context().Value(routeNoteKey{}).(*routeNote); ok {
			note.mu.Lock()
			note.pattern = r.Pattern
			note.mu.Unlock()
		}
	})
}

// observeStream counts an open stream and its bytes (xbot_sse_clients,
// xbot_sse_bytes_total) until the returned function is called. what is
// serveStream's "run <id>" or "session <id>": only its kind is a label.
func observeStream(what string, sink uistream.Sink) (uistream.Sink, func()) {
	kind, _, _ := strings.Cut(what, " ")
	closed, wrote := metrics.StreamOpened(kind)
	return countingSink{Sink: sink, wrote: wrote}, closed
}

// countingSink counts the bytes written through it.
type countingSink struct {
	uistream.Sink
	wrote func(int)
}

func (s countingSink) Write(p []byte) (int, error) {
	n, err := s.Sink.Write(p)
	s.wrote(n)
	return n, err
}
