package api

import (
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// retryable is an error that never reached its server.
type retryable struct{}

func (retryable) Error() string     { return "conn busy" }
func (retryable) SafeToRetry() bool { return true }

// TestDependencyDownTellsAnOutageFromAFault: what a driver reports of a
// server it cannot use is an outage (503); a server's answer to a bad
// statement, or any other error, is a fault (500).
func TestDependencyDownTellsAnOutageFromAFault(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		err  error
		down bool
	}{
		{&pgconn.PgError{Code: "57P01", Message: "terminating connection due to administrator command"}, true},
		{&pgconn.PgError{Code: "57P03", Message: "the database system is starting up"}, true},
		{&pgconn.PgError{Code: "53300", Message: "too many connections"}, true},
		{&pgconn.PgError{Code: "08006", Message: "connection failure"}, true},
		{fmt.Errorf("query: %w", io.ErrUnexpectedEOF), true},
		{fmt.Errorf("acquire: %w", retryable{}), true},
		{&pgconn.PgError{Code: "42P01", Message: `relation "runs" does not exist`}, false},
		{&pgconn.PgError{Code: "23505", Message: "duplicate key value"}, false},
		{&pgconn.PgError{Code: "57014", Message: "canceling statement due to user request"}, false},
		{errors.New("scan: cannot convert"), false},
	} {
		if got := dependencyDown(fmt.Errorf("read: %w", c.err)); got != c.down {
			t.Errorf("dependencyDown(%v) = %v, want %v", c.err, got, c.down)
		}
	}
}
