package client

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/url"
	"strconv"
)

// Page selects one page of a list endpoint that pages by cursor.
type Page struct {
	// Cursor is the NextCursor of the previous page; empty for the first.
	Cursor string
	// Limit is the page size; 0 takes the server's default.
	Limit int
}

func (p Page) query(q url.Values) url.Values {
	if p.Cursor != "" {
		q.Set("cursor", p.Cursor)
	}
	if p.Limit > 0 {
		q.Set("limit", strconv.Itoa(p.Limit))
	}
	return q
}

// withQuery appends q to path when it is not empty.
func withQuery(path string, q url.Values) string {
	if len(q) == 0 {
		return path
	}
	return path + "?" + q.Encode()
}

// everyPage reads a cursor-paged list from page from to its last (the
// first without a next cursor) and returns every row; a cursor named a
// second time is an error, not an endless loop.
func everyPage[T any](ctx context.Context, from Page, page func(context.Context, Page) ([]T, string, error)) ([]T, error) {
	var out []T
	for row, err := range pageRows(ctx, from, page) {
		if err != nil {
			return out, err
		}
		out = append(out, row)
	}
	return out, nil
}

// pageRows yields every row of a cursor-paged list from page from on, one
// page read at a time as the caller asks for more; an error is yielded
// once, last. A page that names as the next a cursor already read (itself,
// or one before it: a server going round in circles) is an error, not an
// endless loop.
func pageRows[T any](ctx context.Context, from Page, page func(context.Context, Page) ([]T, string, error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		read := map[string]bool{}
		for p := from; ; {
			rows, next, err := page(ctx, p)
			if err != nil {
				yield(zero, err)
				return
			}
			read[p.Cursor] = true
			for _, r := range rows {
				if !yield(r, nil) {
					return
				}
			}
			if next == "" {
				return
			}
			if read[next] {
				yield(zero, fmt.Errorf("the page at cursor %q names cursor %q again as the next: paging would never end", p.Cursor, next))
				return
			}
			p.Cursor = next
		}
	}
}

// Runs yields every run q selects, newest first, reading page after page
// (GET /v1/runs) as the loop asks for more; q.Page is where it starts. An
// error answer is yielded once, last.
func (c *Client) Runs(ctx context.Context, q RunQuery) iter.Seq2[Run, error] {
	return pageRows(ctx, q.Page, func(ctx context.Context, p Page) ([]Run, string, error) {
		q.Cursor = p.Cursor
		page, err := c.ListRuns(ctx, q)
		return page.Runs, page.NextCursor, err
	})
}

// SessionRuns yields every run of a platform session q selects, newest
// first (GET /v1/sessions/{platformSessionId}/runs), as Runs does.
func (c *Client) SessionRuns(ctx context.Context, sessionID string, q RunQuery) iter.Seq2[Run, error] {
	return pageRows(ctx, q.Page, func(ctx context.Context, p Page) ([]Run, string, error) {
		q.Cursor = p.Cursor
		page, err := c.ListSessionRuns(ctx, sessionID, q)
		return page.Runs, page.NextCursor, err
	})
}

// Approvals yields every approval q selects, newest request first (GET
// /v1/approvals), as Runs does.
func (c *Client) Approvals(ctx context.Context, q ApprovalQuery) iter.Seq2[Approval, error] {
	return pageRows(ctx, q.Page, func(ctx context.Context, p Page) ([]Approval, string, error) {
		q.Cursor = p.Cursor
		page, err := c.ListApprovals(ctx, q)
		return page.Approvals, page.NextCursor, err
	})
}

// Items yields every item of a run in log order (GET /v1/runs/{runId}/items)
// from page p on (p.Limit is every page's size), as Runs does.
func (c *Client) Items(ctx context.Context, runID string, p Page) iter.Seq2[Item, error] {
	return pageRows(ctx, p, func(ctx context.Context, p Page) ([]Item, string, error) {
		page, err := c.ListItems(ctx, runID, p)
		return page.Items, page.NextCursor, err
	})
}

// Events yields a run's events after afterSeq in seq order, up to the last
// one the log holds when the loop gets there (GET /v1/runs/{runId}/events,
// pages of the server's default size). An error answer, or a page that does
// not move forward, is yielded once, last.
func (c *Client) Events(ctx context.Context, runID string, afterSeq int64) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		stop := errors.New("stop")
		err := c.EventPages(ctx, runID, afterSeq, 0, func(p EventPage) error {
			for _, ev := range p.Events {
				if !yield(ev, nil) {
					return stop
				}
			}
			return nil
		})
		if err != nil && !errors.Is(err, stop) {
			yield(Event{}, err)
		}
	}
}
