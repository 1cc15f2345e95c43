package client

import (
	"context"
	"fmt"
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
// first without a next cursor) and returns every row; a page that names
// itself as the next is an error, not an endless loop.
func everyPage[T any](ctx context.Context, from Page, page func(context.Context, Page) ([]T, string, error)) ([]T, error) {
	var out []T
	for p := from; ; {
		rows, next, err := page(ctx, p)
		if err != nil {
			return out, err
		}
		out = append(out, rows...)
		if next == "" {
			return out, nil
		}
		if next == p.Cursor {
			return out, fmt.Errorf("the page at cursor %q names itself as the next", next)
		}
		p.Cursor = next
	}
}
