package client

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// CommandOptions are what every command endpoint takes besides its body.
type CommandOptions struct {
	// IdempotencyKey makes retries safe (header Idempotency-Key); empty lets
	// the server generate one, so a retry is a new command.
	IdempotencyKey string
	// Wait is how long the server waits for the outcome (?wait=): nil leaves
	// the server's default; 0 answers at once, usually "pending".
	Wait *time.Duration
}

// WaitFor returns a pointer to d, for CommandOptions.Wait.
func WaitFor(d time.Duration) *time.Duration { return &d }

func (o CommandOptions) apply(path string) (string, []string) {
	if o.Wait != nil {
		path += "?wait=" + url.QueryEscape(o.Wait.String())
	}
	if o.IdempotencyKey == "" {
		return path, nil
	}
	return path, []string{"Idempotency-Key", o.IdempotencyKey}
}

func (c *Client) command(ctx context.Context, path string, body any, opts CommandOptions) (CommandResult, error) {
	path, hdr := opts.apply(path)
	var res CommandResult
	err := c.call(ctx, http.MethodPost, path, body, &res, hdr...)
	return res, err
}

// CreateRun queues a CreateRun command (POST /v1/runs).
func (c *Client) CreateRun(ctx context.Context, req CreateRunRequest, opts CommandOptions) (CommandResult, error) {
	return c.command(ctx, "/v1/runs", req, opts)
}

// CancelRun queues a CancelRun command (POST /v1/runs/{runId}/cancel).
func (c *Client) CancelRun(ctx context.Context, runID, reason string, opts CommandOptions) (CommandResult, error) {
	return c.command(ctx, "/v1/runs/"+url.PathEscape(runID)+"/cancel", reasonBody(reason), opts)
}

// reasonBody is the body of a command that takes only a reason: none when
// reason is empty, so the server's default applies.
func reasonBody(reason string) any {
	if reason == "" {
		return nil
	}
	return struct {
		Reason string `json:"reason"`
	}{reason}
}

// AppendInput queues an AppendUserInput command (POST
// /v1/runs/{runId}/inputs).
func (c *Client) AppendInput(ctx context.Context, runID string, req AppendInputRequest, opts CommandOptions) (CommandResult, error) {
	return c.command(ctx, "/v1/runs/"+url.PathEscape(runID)+"/inputs", req, opts)
}

// GetRun reads a run (GET /v1/runs/{runId}).
func (c *Client) GetRun(ctx context.Context, runID string) (Run, error) {
	var r Run
	err := c.call(ctx, http.MethodGet, "/v1/runs/"+url.PathEscape(runID), nil, &r)
	return r, err
}

// ListEvents reads one page of a run's events after afterSeq (GET
// /v1/runs/{runId}/events); limit 0 takes the server's default page size.
func (c *Client) ListEvents(ctx context.Context, runID string, afterSeq int64, limit int) (EventPage, error) {
	q := url.Values{"after_seq": {strconv.FormatInt(afterSeq, 10)}}
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

// Healthy reports nil when GET /healthz answers 200.
func (c *Client) Healthy(ctx context.Context) error {
	if err := c.call(ctx, http.MethodGet, "/healthz", nil, nil); err != nil {
		return fmt.Errorf("health: %w", err)
	}
	return nil
}
