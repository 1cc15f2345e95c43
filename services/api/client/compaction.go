package client

import (
	"context"
	"net/url"
)

// CompactRun queues a RequestCompaction command (POST
// /v1/runs/{runId}/compact): the run's context is summarised at its next
// model request. reason may be empty.
func (c *Client) CompactRun(ctx context.Context, runID, reason string, opts CommandOptions) (CommandResult, error) {
	return c.command(ctx, "/v1/runs/"+url.PathEscape(runID)+"/compact", reasonBody(reason), opts)
}
