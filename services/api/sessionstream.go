package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/xbot-runtime/xbot/projections/uistream"
)

type sessionStreamInput struct {
	PlatformSessionID string `path:"platformSessionId" maxLength:"160" pattern:"^[A-Za-z0-9._:-]{1,160}$" doc:"The platform session's id."`
	LastEventID       string `header:"Last-Event-ID" doc:"The id of the last chunk received: the stream resumes right after it."`
	After             string `query:"after" doc:"A chunk id of this stream (<runId>:<seq> or <runId>:<seq>.<i>) to resume after. Last-Event-ID wins when both are given."`
}

func (a *API) registerSessionStream() {
	register(a, huma.Operation{
		OperationID: "streamSession", Method: http.MethodGet, Path: "/v1/sessions/{platformSessionId}/stream",
		Summary: "Stream a session's replies",
		Description: "The replies of the session's runs, one after the other in creation order, as a Vercel AI SDK " +
			"UI message stream; each reply is one message (messageId = runId) from its start chunk to its finish. " +
			"Without a position the stream starts at the first reply that has not ended (from its start), or waits for " +
			"the next run; it stays open for the session's later runs. Chunk ids are `<runId>:<seq>[.<i>]`; " +
			"reconnect with `Last-Event-ID` to continue exactly after the last chunk received (or with the `cursor` of " +
			"`GET /v1/sessions/{platformSessionId}/state`). Each run's transient `data-status` parts (working, waiting, idle) " +
			"show the session's status: the last one received is current. 404 when the tenant has no run in the session, " +
			"after waiting for the event log to show one (2 s by default) (a session created moments ago is streamed at once). The response headers are sent at once.",
		Tags:      []string{"Runs"},
		Errors:    []int{http.StatusNotFound, http.StatusTooManyRequests, http.StatusServiceUnavailable},
		Responses: a.streamResponses("The session's replies."),
	}, a.sessionStream)
}

func (a *API) sessionStream(ctx context.Context, in *sessionStreamInput) (*huma.StreamResponse, error) {
	deps, err := a.streamDeps()
	if err != nil {
		return nil, err
	}
	tenant := tenantOf(ctx)
	src := sessionSource{runSource: runSource{store: deps.store, tenant: tenant}, session: in.PlatformSessionID}
	if err := a.awaitSession(ctx, deps, in.PlatformSessionID); err != nil {
		return nil, err
	}
	from, err := a.sessionFrom(ctx, src, in)
	if err != nil {
		return nil, err
	}
	var source uistream.SessionSource = src
	if from == nil {
		// Where a stream without a position starts is read before the
		// response headers go out: a client that sends a message once it
		// has them sees that message's reply, even when the reply ends
		// before the stream would otherwise have looked for the head.
		head, ok, err := src.SessionHead(ctx)
		if err != nil {
			return nil, err
		}
		source = pinnedHead{sessionSource: src, head: head, ok: ok}
	}
	return a.serveStream(ctx, "session "+in.PlatformSessionID, func(ctx context.Context, sink uistream.Sink) error {
		return deps.st.Session(ctx, sink, source, tenant, in.PlatformSessionID, from)
	})
}

// pinnedHead is a session source whose head was read when the request came.
type pinnedHead struct {
	sessionSource
	head uistream.RunRef
	ok   bool
}

func (p pinnedHead) SessionHead(context.Context) (uistream.RunRef, bool, error) {
	return p.head, p.ok, nil
}

// sessionFrom is the client's position, checked to name a run of the session.
func (a *API) sessionFrom(ctx context.Context, src sessionSource, in *sessionStreamInput) (*uistream.SessionPosition, error) {
	location, value := "header.Last-Event-ID", in.LastEventID
	if value == "" {
		location, value = "query.after", in.After
	}
	if value == "" {
		return nil, nil
	}
	p, err := lastEventID(location, value, uistream.ParseSessionPosition)
	if err != nil {
		return nil, err
	}
	if _, err := src.SessionRun(ctx, p.RunID); err != nil {
		if errors.Is(err, uistream.ErrNotInSession) {
			return nil, invalid(location, "names a run that is not in this session", value)
		}
		return nil, err
	}
	return &p, nil
}

// sessionSource reads one tenant's session for the stream.
type sessionSource struct {
	runSource
	session string
}

func streamRef(r StreamRun) uistream.RunRef {
	return uistream.RunRef{RunID: r.RunID, CreatedAt: r.CreatedAt, Ended: r.Ended()}
}

func (s sessionSource) SessionRuns(ctx context.Context, after uistream.RunRef, limit int) ([]uistream.RunRef, error) {
	rows, err := s.store.StreamSessionRuns(ctx, s.tenant, s.session, after.CreatedAt, after.RunID, limit)
	if err != nil {
		return nil, err
	}
	out := make([]uistream.RunRef, len(rows))
	for i, r := range rows {
		out[i] = streamRef(r)
	}
	return out, nil
}

func (s sessionSource) SessionRun(ctx context.Context, runID string) (uistream.RunRef, error) {
	r, err := s.store.StreamSessionRun(ctx, s.tenant, s.session, runID)
	if errors.Is(err, ErrNotFound) {
		return uistream.RunRef{}, fmt.Errorf("%w: %w", uistream.ErrNotInSession, err)
	}
	if err != nil {
		return uistream.RunRef{}, err
	}
	return streamRef(r), nil
}

func (s sessionSource) SessionHead(ctx context.Context) (uistream.RunRef, bool, error) {
	r, err := s.store.StreamSessionHead(ctx, s.tenant, s.session)
	if errors.Is(err, ErrNotFound) {
		return uistream.RunRef{}, false, nil
	}
	if err != nil {
		return uistream.RunRef{}, false, err
	}
	return streamRef(r), true, nil
}
