package api

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/projections/uistream"
)

type runStreamInput struct {
	RunID       string `path:"runId" maxLength:"160" pattern:"^[A-Za-z0-9._:-]{1,160}$" doc:"The run's id (run_…)."`
	LastEventID string `header:"Last-Event-ID" doc:"The id of the last chunk received: the stream resumes right after it."`
	AfterSeq    int64  `query:"afterSeq" minimum:"0" default:"0" doc:"Resume after the chunks of the event with this seq (0: from the start). Last-Event-ID wins when both are given."`
}

func (a *API) registerRunStream() {
	register(a, huma.Operation{
		OperationID: "streamRun", Method: http.MethodGet, Path: "/v1/runs/{runId}/stream",
		Summary: "Stream a run's reply",
		Description: "The run's reply as a Vercel AI SDK UI message stream (header `x-vercel-ai-ui-message-stream: v1`): " +
			"the whole reply from its start, or from a position, then live until it ends with `data: [DONE]`. " +
			"Each chunk's SSE id is its position (`<seq>` or `<seq>.<i>`); reconnect with `Last-Event-ID` to continue " +
			"exactly after the last chunk received. A client that falls too far behind is disconnected and resumes the same way. " +
			"A run created moments ago (e.g. with `?wait=0`) is streamed as soon as the event log shows it, even before the " +
			"read models do; 404 run_not_found only after waiting for it to appear (2 s by default). The response headers are sent at once.",
		Tags:      []string{"Runs"},
		Errors:    []int{http.StatusNotFound, http.StatusTooManyRequests, http.StatusServiceUnavailable},
		Responses: a.streamResponses("The run's reply."),
	}, a.runStream)
}

func (a *API) runStream(ctx context.Context, in *runStreamInput) (*huma.StreamResponse, error) {
	noteRun(ctx, in.RunID)
	deps, err := a.streamDeps()
	if err != nil {
		return nil, err
	}
	if err := a.awaitRun(ctx, deps.hub, in.RunID); err != nil {
		return nil, err
	}
	from := uistream.After(in.AfterSeq)
	if in.LastEventID != "" {
		if from, err = lastEventID("header.Last-Event-ID", in.LastEventID, uistream.ParsePosition); err != nil {
			return nil, err
		}
	}
	tenant := tenantOf(ctx)
	src := runSource{store: deps.store, tenant: tenant}
	return a.serveStream(ctx, "run "+in.RunID, func(ctx context.Context, sink uistream.Sink) error {
		return deps.st.Run(ctx, sink, src, tenant, in.RunID, from)
	})
}

// runSource reads one tenant's events for the stream.
type runSource struct {
	store  StreamStore
	tenant string
}

func (s runSource) RunEvents(ctx context.Context, runID string, afterSeq int64, limit int) ([]events.Envelope, error) {
	return s.store.StreamRunEvents(ctx, s.tenant, runID, afterSeq, limit)
}
