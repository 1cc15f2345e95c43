package client

import (
	"context"
	"net/http"
	"net/url"
)

// Item is one RuntimeItem of a run (a message, reasoning, a tool call) as the
// items read model holds it.
type Item struct {
	ItemID string `json:"itemId"`
	RunID  string `json:"runId"`
	// Type is the item type (user_message, assistant_message,
	// command_execution, …).
	Type string `json:"type"`
	// Status is started, awaiting_approval, completed, truncated or failed.
	Status     string `json:"status"`
	StartedSeq int64  `json:"startedSeq"`
	UpdatedSeq int64  `json:"updatedSeq"`
	ToolName   string `json:"toolName,omitempty"`
	ToolCallID string `json:"toolCallId,omitempty"`
	// Input is the tool call's arguments as the model wrote them, cut to
	// 32 KiB (InputTruncated).
	Input          string `json:"input,omitempty"`
	InputTruncated bool   `json:"inputTruncated,omitempty"`
	// Output is the closing event's content, cut to 32 KiB
	// (OutputTruncated); nil while the item is open or when it failed.
	Output          *string `json:"output,omitempty"`
	OutputTruncated bool    `json:"outputTruncated,omitempty"`
	ErrorCode       string  `json:"errorCode,omitempty"`
	ErrorMessage    string  `json:"errorMessage,omitempty"`
	// ExitCode is set for a completed command_execution.
	ExitCode *int `json:"exitCode,omitempty"`
	// StartedAt and CompletedAt are Unix milliseconds.
	StartedAt   int64  `json:"startedAt"`
	CompletedAt *int64 `json:"completedAt,omitempty"`
	DurationMs  *int64 `json:"durationMs,omitempty"`
}

// ItemPage is the answer of GET /v1/runs/{runId}/items.
type ItemPage struct {
	Items []Item `json:"items"`
	// NextCursor is the Page.Cursor of the next page; empty on the last.
	NextCursor string `json:"nextCursor,omitempty"`
}

// ListItems reads one page of a run's items in log order (GET
// /v1/runs/{runId}/items).
func (c *Client) ListItems(ctx context.Context, runID string, p Page) (ItemPage, error) {
	var out ItemPage
	path := withQuery("/v1/runs/"+url.PathEscape(runID)+"/items", p.query(url.Values{}))
	err := c.call(ctx, http.MethodGet, path, nil, &out)
	return out, err
}

// AllItems reads every item of a run, page after page from p (whose Limit
// is every page's size).
func (c *Client) AllItems(ctx context.Context, runID string, p Page) ([]Item, error) {
	return everyPage(ctx, p, func(ctx context.Context, p Page) ([]Item, string, error) {
		page, err := c.ListItems(ctx, runID, p)
		return page.Items, page.NextCursor, err
	})
}
