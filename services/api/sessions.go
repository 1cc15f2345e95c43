package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/xbot-runtime/xbot/events"
)

// sessionSummary is a row of the sessions read model as the API shows it.
type sessionSummary struct {
	PlatformSessionID string `json:"platformSessionId"`
	FirstRunID        string `json:"firstRunId" doc:"The session's earliest run."`
	LastRunID         string `json:"lastRunId" doc:"The session's latest run."`
	LastRunStatus     string `json:"lastRunStatus" enum:"created,queued,running,paused,completed,failed,cancelled,expired" doc:"State of the latest run."`
	RunCount          int64  `json:"runCount"`
	FirstRunAt        int64  `json:"firstRunAt" doc:"Unix milliseconds: when the earliest run was created."`
	LastActivityAt    int64  `json:"lastActivityAt" doc:"Unix milliseconds: the latest event of any of its runs."`
}

type listSessionRunsInput struct {
	PlatformSessionID string `path:"platformSessionId" maxLength:"160" pattern:"^[A-Za-z0-9._:-]{1,160}$" doc:"The platform session's id."`
	Status            string `query:"status" enum:"created,queued,running,paused,completed,failed,cancelled,expired" doc:"Only runs in this state."`
	Cursor            string `query:"cursor" doc:"nextCursor of the previous page."`
	Limit             int    `query:"limit" minimum:"1" maximum:"500" default:"50" doc:"Page size (the read model's bounds)."`
}

type sessionRunList struct {
	Session    sessionSummary `json:"session"`
	Runs       []run          `json:"runs" nullable:"false"`
	NextCursor string         `json:"nextCursor,omitempty" doc:"Pass as cursor to get the next page; absent on the last page."`
}

type listSessionRunsOutput struct {
	Body sessionRunList
}

func (a *API) registerListSessionRuns() {
	register(a, huma.Operation{
		OperationID: "listSessionRuns", Method: http.MethodGet, Path: "/v1/sessions/{platformSessionId}/runs",
		Summary: "List a session's runs",
		Description: "The platform session's summary and its runs, newest first, one page at a time. " +
			"404 when the tenant has no run in this session.",
		Tags:   []string{"Runs"},
		Errors: []int{http.StatusNotFound, http.StatusServiceUnavailable},
	}, a.listSessionRuns)
}

func (a *API) listSessionRuns(ctx context.Context, in *listSessionRunsInput) (*listSessionRunsOutput, error) {
	tenant := tenantOf(ctx)
	s, err := a.store.GetSession(ctx, tenant, in.PlatformSessionID)
	switch {
	case errors.Is(err, ErrNotFound) || (err == nil && s.TenantID != tenant):
		return nil, newProblem(http.StatusNotFound, events.CodeNotFound, "session not found")
	case err != nil:
		return nil, fmt.Errorf("get session %s: %w", in.PlatformSessionID, err)
	}
	rows, next, err := a.store.ListRuns(ctx, RunFilter{TenantID: tenant,
		PlatformSessionID: in.PlatformSessionID, Status: in.Status, After: in.Cursor, Limit: in.Limit})
	if err != nil {
		return nil, fmt.Errorf("list runs of session %s: %w", in.PlatformSessionID, err)
	}
	out := &listSessionRunsOutput{Body: sessionRunList{Runs: make([]run, 0, len(rows)), NextCursor: next,
		Session: sessionSummary{PlatformSessionID: s.PlatformSessionID, FirstRunID: s.FirstRunID, LastRunID: s.LastRunID,
			LastRunStatus: s.LastRunStatus, RunCount: s.RunCount, FirstRunAt: s.FirstRunAt.UnixMilli(),
			LastActivityAt: s.LastActivityAt.UnixMilli()}}}
	for _, r := range rows {
		v, err := runView(r)
		if err != nil {
			return nil, err
		}
		out.Body.Runs = append(out.Body.Runs, v)
	}
	return out, nil
}
