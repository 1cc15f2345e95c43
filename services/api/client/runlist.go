package client

import (
	"context"
	"net/http"
	"net/url"
)

// RunQuery selects runs of GET /v1/runs and GET
// /v1/sessions/{platformSessionId}/runs.
type RunQuery struct {
	// PlatformSessionID keeps only the runs of this session (ListRuns; for
	// ListSessionRuns the session is its argument).
	PlatformSessionID string
	// Status keeps only runs in this state (queued, completed, …).
	Status string
	Page
}

func (q RunQuery) values() url.Values {
	v := url.Values{}
	if q.PlatformSessionID != "" {
		v.Set("platformSessionId", q.PlatformSessionID)
	}
	if q.Status != "" {
		v.Set("status", q.Status)
	}
	return q.query(v)
}

// RunPage is the answer of GET /v1/runs.
type RunPage struct {
	Runs []Run `json:"runs"`
	// NextCursor is the Page.Cursor of the next page; empty on the last.
	NextCursor string `json:"nextCursor,omitempty"`
}

// ListRuns reads one page of the tenant's runs, newest first (GET /v1/runs).
func (c *Client) ListRuns(ctx context.Context, q RunQuery) (RunPage, error) {
	var out RunPage
	err := c.call(ctx, http.MethodGet, withQuery("/v1/runs", q.values()), nil, &out)
	return out, err
}

// AllRuns reads every run q selects, page after page (q.Page is where it
// starts).
func (c *Client) AllRuns(ctx context.Context, q RunQuery) ([]Run, error) {
	return everyPage(ctx, q.Page, func(ctx context.Context, p Page) ([]Run, string, error) {
		q.Cursor = p.Cursor
		page, err := c.ListRuns(ctx, q)
		return page.Runs, page.NextCursor, err
	})
}
