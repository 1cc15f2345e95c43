package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"
	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/projections/uistream"
)

// StreamStore is what the UI stream endpoints read from the read models for
// backfill; the wiring adapts the Postgres ones to it. Every method is scoped
// to the tenant; StreamSessionHead and StreamSessionRun return an error for
// which errors.Is(err, ErrNotFound) holds when the tenant has no such session
// or run.
type StreamStore interface {
	StreamRunEvents(ctx context.Context, tenantID, runID string, afterSeq int64, limit int) ([]events.Envelope, error)
	StreamSessionRuns(ctx context.Context, tenantID, sessionID string, afterCreated time.Time, afterRunID string, limit int) ([]StreamRun, error)
	StreamSessionHead(ctx context.Context, tenantID, sessionID string) (StreamRun, error)
	StreamSessionRun(ctx context.Context, tenantID, sessionID, runID string) (StreamRun, error)
}

// streams is what EnableStreams attached; the stream endpoints answer 503
// until it is set.
type streams struct {
	mu       sync.RWMutex
	streamer *uistream.Streamer
	hub      *uistream.Hub
	store    StreamStore
	barrier  TailBarrier
}

// TailBarrier is a read barrier over the tail that feeds the hub:
// Barrier returns nil once the tail has handed the hub every event
// committed before the call (kafka.Tail).
type TailBarrier interface {
	Barrier(ctx context.Context) error
}

// UseTailBarrier lets run reads that find nothing wait for the hub to hold
// everything committed before them, instead of a fixed tailCatchUp.
func (a *API) UseTailBarrier(b TailBarrier) {
	a.streams.mu.Lock()
	defer a.streams.mu.Unlock()
	a.streams.barrier = b
}

// EnableStreams serves the UI stream endpoints with live events from hub
// (fed by this instance's one kafka.Tail of the events topic) and backfill
// from store. cfg.Logger defaults to the API's logger. Close hub when the
// server shuts down: open streams end only then (or when clients leave).
func (a *API) EnableStreams(hub *uistream.Hub, store StreamStore, cfg uistream.StreamConfig) error {
	if hub == nil || store == nil {
		panic("api.EnableStreams: hub and store are required")
	}
	if cfg.Logger == nil {
		cfg.Logger = a.log.Named("uistream")
	}
	st, err := uistream.NewStreamer(cfg, hub)
	if err != nil {
		return err
	}
	a.streams.mu.Lock()
	defer a.streams.mu.Unlock()
	a.streams.streamer, a.streams.hub, a.streams.store = st, hub, store
	return nil
}

// streamDeps returns what EnableStreams attached, or a 503 problem.
func (a *API) streamDeps() (streamDeps, error) {
	a.streams.mu.RLock()
	defer a.streams.mu.RUnlock()
	if a.streams.streamer == nil {
		return streamDeps{}, newProblem(http.StatusServiceUnavailable, events.CodeUnavailable, "streams are not enabled on this instance")
	}
	return streamDeps{a.streams.streamer, a.streams.hub, a.streams.store, a.streams.barrier}, nil
}

type streamDeps struct {
	st      *uistream.Streamer
	hub     *uistream.Hub
	store   StreamStore
	barrier TailBarrier // nil: wait tailCatchUp
}

// serveStream is the response body of both endpoints: the headers, then the
// stream until it ends or the client leaves.
// It holds one of the principal's stream slots while open, and answers 429
// too_many_streams when none is free.
func (a *API) serveStream(ctx context.Context, what string, serve func(context.Context, uistream.Sink) error) (*huma.StreamResponse, error) {
	release, err := a.slots.acquire(principalOf(ctx))
	if err != nil {
		return nil, tooManyStreams()
	}
	return &huma.StreamResponse{Body: func(hctx huma.Context) {
		defer release()
		_, w := humago.Unwrap(hctx)
		uistream.SetHeaders(w.Header())
		w.WriteHeader(http.StatusOK)
		// Send the headers now: a stream with nothing to say yet must not
		// leave the client waiting for them until the first keep-alive.
		// The request logger wraps w, so ask through ResponseController,
		// which unwraps it.
		_ = http.NewResponseController(w).Flush()
		sink, closed := observeStream(what, uistream.HTTPSink(w))
		defer closed()
		err := serve(hctx.Context(), sink)
		switch {
		case err == nil || errors.Is(err, context.Canceled):
		case errors.Is(err, uistream.ErrCutOff) || errors.Is(err, uistream.ErrBehind):
			a.log.Info("stream ended early; the client resumes", zap.String("stream", what), zap.Error(err))
		default:
			a.log.Warn("stream failed", zap.String("stream", what), zap.String("tenant_id", tenantOf(ctx)), zap.Error(err))
		}
	}}, nil
}

// streamResponses documents a stream's 200 response.
func (a *API) streamResponses(what string) map[string]*huma.Response {
	const name = "UIMessageChunk"
	reg := a.api.OpenAPI().Components.Schemas
	if _, ok := reg.Map()[name]; !ok {
		reg.Map()[name] = &huma.Schema{Type: huma.TypeObject, Required: []string{"type"},
			AdditionalProperties: true,
			Description: "A Vercel AI SDK UI message stream chunk (npm ai@6, uiMessageChunkSchema): start, " +
				"text-*, reasoning-*, start-step, finish-step, tool-input-start, tool-input-available, " +
				"tool-output-available, tool-output-error, tool-output-denied, tool-approval-request, " +
				"data-interaction, data-file-changes, data-tool-output, data-plan, data-compaction, data-status (transient " +
				"{status: working|waiting|idle, runId, reason?}, sent when the run's status changes), message-metadata, error, finish, abort.",
			Properties: map[string]*huma.Schema{"type": {Type: huma.TypeString, Description: "The chunk type."}}}
	}
	return map[string]*huma.Response{"200": {
		Description: what + " Server-sent events: each event is `id: <position>` and `data: <chunk JSON>`; " +
			"`: keep-alive` comment lines keep idle connections open.",
		Headers: map[string]*huma.Header{"X-Vercel-Ai-Ui-Message-Stream": {
			Description: "The AI SDK's UI message stream protocol version.", Schema: &huma.Schema{Type: huma.TypeString, Enum: []any{"v1"}}}},
		Content: map[string]*huma.MediaType{"text/event-stream": {Schema: &huma.Schema{Type: huma.TypeArray,
			Description: "The stream's SSE events, in order.", Items: &huma.Schema{Ref: schemaPrefix + name}}}},
	}}
}

// registerStreams adds the UI stream endpoints (runstream.go, sessionstream.go).
func (a *API) registerStreams() {
	a.registerRunStream()
	a.registerSessionStream()
}

// lastEventID parses a Last-Event-ID (or query cursor) with parse, as a 422
// problem at location when it is not one of ours.
func lastEventID[P any](location, value string, parse func(string) (P, error)) (P, error) {
	p, err := parse(value)
	if err != nil {
		return p, invalid(location, "is not an id of this stream", value)
	}
	return p, nil
}

// wrapNotFound turns the store's ErrNotFound into a 404 problem.
func wrapNotFound(err error, what string) error {
	if errors.Is(err, ErrNotFound) {
		return newProblem(http.StatusNotFound, events.CodeNotFound, what+" not found")
	}
	return fmt.Errorf("%s: %w", what, err)
}
