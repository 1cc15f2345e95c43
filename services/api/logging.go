package api

import (
	"context"
	"net/http"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/events"
)

// requestInfo collects what the request log line reports besides the HTTP
// basics; handlers fill it in as they learn it.
type requestInfo struct {
	mu       sync.Mutex
	tenantID string
	runID    string
}

type requestInfoKey struct{}

func noteTenant(ctx context.Context, tenantID string) {
	if ri, ok := ctx.Value(requestInfoKey{}).(*requestInfo); ok {
		ri.mu.Lock()
		ri.tenantID = tenantID
		ri.mu.Unlock()
	}
}

func noteRun(ctx context.Context, runID string) {
	if ri, ok := ctx.Value(requestInfoKey{}).(*requestInfo); ok {
		ri.mu.Lock()
		ri.runID = runID
		ri.mu.Unlock()
	}
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// logRequests writes one line per request. It never logs headers (tokens),
// query strings or bodies.
func (a *API) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ri := &requestInfo{}
		rec := &statusRecorder{ResponseWriter: w}
		defer a.logRequest(r, rec, ri, start)
		defer a.recoverPanic(rec, r)
		next.ServeHTTP(rec, r.WithContext(context.WithValue(r.Context(), requestInfoKey{}, ri)))
	})
}

func (a *API) logRequest(r *http.Request, rec *statusRecorder, ri *requestInfo, start time.Time) {
	status := rec.status
	if status == 0 {
		status = http.StatusOK
	}
	ri.mu.Lock()
	defer ri.mu.Unlock()
	fields := []zap.Field{zap.String("method", r.Method), zap.String("path", r.URL.Path),
		zap.Int("status", status), zap.Duration("duration", time.Since(start))}
	if ri.tenantID != "" {
		fields = append(fields, zap.String("tenant_id", ri.tenantID))
	}
	if ri.runID != "" {
		fields = append(fields, zap.String("run_id", ri.runID))
	}
	a.log.Info("http request", fields...)
}

// recoverPanic turns a handler panic into a 500 problem (when nothing was
// written yet) and logs it; http.ErrAbortHandler keeps its meaning.
func (a *API) recoverPanic(rec *statusRecorder, r *http.Request) {
	v := recover()
	if v == nil {
		return
	}
	if v == http.ErrAbortHandler { //nolint:errorlint // a sentinel panic value, not a wrapped error
		panic(v)
	}
	a.log.Error("handler panicked", zap.String("method", r.Method), zap.String("path", r.URL.Path),
		zap.Any("panic", v), zap.Stack("stack"))
	if rec.status == 0 {
		writeProblem(rec, newProblem(http.StatusInternalServerError, events.CodeInternal, "internal error"))
	}
}
