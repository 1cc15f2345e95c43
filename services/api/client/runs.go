package client

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
)

// GetRun reads a run (GET /v1/runs/{runId}).
func (c *Client) GetRun(ctx context.Context, runID string) (Run, error) {
	var r Run
	err := c.call(ctx, http.MethodGet, "/v1/runs/"+url.PathEscape(runID), nil, &r)
	return r, err
}

// ListEvents reads one page of a run's events after afterSeq (GET
// /v1/runs/{runId}/events); limit 0 takes the server's default page size.
func (c *Client) ListEvents(ctx context.Context, runID string, afterSeq int64, limit int) (EventPage, error) {
	q := url.Values{"afterSeq": {strconv.FormatInt(afterSeq, 10)}}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var p EventPage
	err := c.call(ctx, http.MethodGet, "/v1/runs/"+url.PathEscape(runID)+"/events?"+q.Encode(), nil, &p)
	return p, err
}

// AllEvents reads a run's whole log, page after page.
func (c *Client) AllEvents(ctx context.Context, runID string) ([]Event, error) {
	var out []Event
	err := c.EventPages(ctx, runID, 0, 0, func(p EventPage) error {
		out = append(out, p.Events...)
		return nil
	})
	return out, err
}

// GetCommand reads a command's outcome (GET /v1/commands/{commandId}).
func (c *Client) GetCommand(ctx context.Context, commandID string) (Command, error) {
	var cmd Command
	err := c.call(ctx, http.MethodGet, "/v1/commands/"+url.PathEscape(commandID), nil, &cmd)
	return cmd, err
}

// Projectors reads every view's lag (GET /v1/system/projectors).
func (c *Client) Projectors(ctx context.Context) ([]ProjectorLag, error) {
	var out struct {
		Projectors []ProjectorLag `json:"projectors"`
	}
	err := c.call(ctx, http.MethodGet, "/v1/system/projectors", nil, &out)
	return out.Projectors, err
}

// RunStream opens a run's UI message stream (GET /v1/runs/{runId}/stream,
// server-sent events) and returns its body, which the caller reads and
// closes; query (e.g. "after_seq=4") is appended when not empty.
func (c *Client) RunStream(ctx context.Context, runID, query string) (io.ReadCloser, error) {
	path := "/v1/runs/" + url.PathEscape(runID) + "/stream"
	if query != "" {
		path += "?" + query
	}
	resp, err := c.Send(ctx, http.MethodGet, path, nil)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		defer func() { _ = resp.Body.Close() }()
		return nil, readProblem(http.MethodGet, path, resp)
	}
	return resp.Body, nil
}

// Healthy reports nil when GET /healthz answers 200. It asks once, never
// retrying: a probe reports the API as it is now (a 503 is the answer, at
// once, not after the retry policy's backoff).
func (c *Client) Healthy(ctx context.Context) error {
	resp, err := c.Send(ctx, http.MethodGet, "/healthz", nil)
	if err != nil {
		return fmt.Errorf("health: %w", err)
	}
	defer drain(resp)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("health: %w", readProblem(http.MethodGet, "/healthz", resp))
	}
	return nil
}
