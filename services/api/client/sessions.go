package client

import (
	"context"
	"net/http"
	"net/url"
)

// Session is a platform session's summary.
type Session struct {
	PlatformSessionID string `json:"platformSessionId"`
	FirstRunID        string `json:"firstRunId"`
	LastRunID         string `json:"lastRunId"`
	// LastRunStatus is the state of the latest run.
	LastRunStatus string `json:"lastRunStatus"`
	RunCount      int64  `json:"runCount"`
	// FirstRunAt and LastActivityAt are Unix milliseconds.
	FirstRunAt     int64 `json:"firstRunAt"`
	LastActivityAt int64 `json:"lastActivityAt"`
}

// SessionRunPage is the answer of GET /v1/sessions/{platformSessionId}/runs.
type SessionRunPage struct {
	Session Session `json:"session"`
	Runs    []Run   `json:"runs"`
	// NextCursor is the Page.Cursor of the next page; empty on the last.
	NextCursor string `json:"nextCursor,omitempty"`
}

// ListSessionRuns reads a platform session's summary and one page of its
// runs, newest first (GET /v1/sessions/{platformSessionId}/runs);
// q.PlatformSessionID is not used. A session the tenant has no run in is a
// *Problem with status 404.
func (c *Client) ListSessionRuns(ctx context.Context, sessionID string, q RunQuery) (SessionRunPage, error) {
	q.PlatformSessionID = ""
	var out SessionRunPage
	path := withQuery("/v1/sessions/"+url.PathEscape(sessionID)+"/runs", q.values())
	err := c.call(ctx, http.MethodGet, path, nil, &out)
	return out, err
}
