package postgres

import (
	"errors"
)

// Page sizes: the defaults suit one screen of a console; the maxima bound
// the memory of one response (an event envelope can be hundreds of KiB).
const (
	defaultRunLimit   = 50
	maxRunLimit       = 500
	defaultEventLimit = 100
	maxEventLimit     = 1000
)

func clampLimit(limit, def, maxLimit int) int {
	switch {
	case limit <= 0:
		return def
	case limit > maxLimit:
		return maxLimit
	}
	return limit
}

// ErrNotFound is returned by queries when no row matches within the tenant.
var ErrNotFound = errors.New("not found")

// ErrInvalidCursor is returned by ListRuns for a cursor it did not issue.
var ErrInvalidCursor = errors.New("invalid cursor")
