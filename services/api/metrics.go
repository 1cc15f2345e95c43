package api

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/xbot-runtime/xbot/infra/metrics"
	"github.com/xbot-runtime/xbot/infra/tracing"
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
// status code (xbot_http_request_seconds), and traces it: the span a
// command's trace starts from (infra/tracing). Paths never become labels or
// span names: they hold run ids.
func observeRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		note := &routeNote{}
		rec := &statusRecorder{ResponseWriter: w}
		ctx, span := tracing.Start(tracing.ExtractHTTP(r.Context(), r.Header), "HTTP "+r.Method)
		defer func() {
			status := rec.status
			if status == 0 {
				status = http.StatusOK
			}
			note.mu.Lock()
			defer note.mu.Unlock()
			metrics.ObserveRequest(note.pattern, status, start)
			endRequestSpan(span, note.pattern, status)
		}()
		next.ServeHTTP(rec, r.WithContext(context.WithValue(ctx, routeNoteKey{}, note)))
	})
}

// endRequestSpan names the request's span after its route and ends it.
func endRequestSpan(span trace.Span, route string, status int) {
	if route != "" {
		span.SetName(route)
		span.SetAttributes(attribute.String("http.route", route))
	}
	span.SetAttributes(attribute.Int("http.response.status_code", status))
	if status >= http.StatusInternalServerError {
		span.SetStatus(codes.Error, http.StatusText(status))
	}
	span.End()
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
