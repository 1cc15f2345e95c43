package api

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"

	"github.com/danielgtaylor/huma/v2"
	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
)

// Errors handlers return; problemFor maps them to HTTP.
var (
	errRunNotFound     = errors.New("run not found")
	errCommandNotFound = errors.New("command not found")
	errUnavailable     = errors.New("command could not be queued")
)

// invalidError lists request fields that failed validation, by location
// (path.runId, query.wait, header.Idempotency-Key, body.input.content).
type invalidError struct{ details []*huma.ErrorDetail }

func (e *invalidError) Error() string {
	msgs := make([]string, len(e.details))
	for i, d := range e.details {
		msgs[i] = d.Error()
	}
	return "invalid request: " + strings.Join(msgs, "; ")
}

func invalid(location, message string, value any) *invalidError {
	return &invalidError{details: []*huma.ErrorDetail{{Location: location, Message: message, Value: value}}}
}

// problemFor is the one place where errors become HTTP problems.
func (a *API) problemFor(ctx context.Context, err error) error {
	var (
		se  huma.StatusError
		inv *invalidError
		ve  *commands.ValidationError
	)
	switch {
	case timedOut(ctx):
		// A write that ran out of time, whatever error its handler met on the way.
		a.log.Warn("write timed out", zap.Duration("write_timeout", a.cfg.Limits.WriteTimeout), zap.Error(err))
		return a.writeTimedOut()
	case errors.As(err, &inv):
		return newProblem(http.StatusUnprocessableEntity, events.CodeValidationFailed, "validation failed", asErrors(inv.details)...)
	case errors.As(err, &ve):
		return newProblem(http.StatusUnprocessableEntity, events.CodeValidationFailed, "validation failed", envelopeDetails(ve)...)
	case errors.Is(err, ErrInvalidCursor):
		return newProblem(http.StatusUnprocessableEntity, events.CodeValidationFailed, "validation failed",
			&huma.ErrorDetail{Location: "query.cursor", Message: "is not a cursor returned by this API"})
	case errors.Is(err, errRunNotFound):
		return newProblem(http.StatusNotFound, events.CodeRunNotFound, "run not found")
	case errors.Is(err, errCommandNotFound):
		return newProblem(http.StatusNotFound, events.CodeCommandNotFound, "command not found")
	case errors.Is(err, errUnavailable):
		a.log.Warn("command not queued", zap.Error(err))
		return newProblem(http.StatusServiceUnavailable, events.CodeUnavailable, "the command could not be queued; retry with the same Idempotency-Key")
	case errors.As(err, &se):
		return err
	case errors.Is(err, context.DeadlineExceeded):
		a.log.Warn("request timed out", zap.Error(err))
		return newProblem(http.StatusServiceUnavailable, events.CodeUnavailable, "a dependency did not answer in time")
	case ctx.Err() == nil && dependencyDown(err):
		a.log.Warn("a dependency is unavailable", zap.Error(err))
		return newProblem(http.StatusServiceUnavailable, events.CodeUnavailable, "a dependency is unavailable; retry")
	}
	if ctx.Err() == nil {
		a.log.Error("request failed", zap.Error(err))
	}
	return newProblem(http.StatusInternalServerError, events.CodeInternal, "internal error")
}

// dependencyDown says whether err is a dependency (the read models'
// database) that cannot be reached or will not serve now, rather than a
// fault of the request or of this code: a network error, a connection that
// ended, a request never sent (errors with SafeToRetry, as pgx's are), or a
// server error of class 08 (connection exception) or 53 (insufficient
// resources: too many connections, out of memory, disk full), or one that
// says the server is shutting down or starting (57P01–57P03). It reads no
// driver's types, so any store that wraps its errors can answer 503.
func dependencyDown(err error) bool {
	var (
		netErr net.Error
		retry  interface{ SafeToRetry() bool }
		state  interface{ SQLState() string }
	)
	switch {
	case errors.As(err, &netErr), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNREFUSED),
		errors.Is(err, syscall.ECONNRESET):
		return true
	case errors.As(err, &retry) && retry.SafeToRetry():
		return true
	case errors.As(err, &state):
		code := state.SQLState()
		return strings.HasPrefix(code, "08") || strings.HasPrefix(code, "53") ||
			code == "57P01" || code == "57P02" || code == "57P03"
	}
	return false
}

// rejectionProblem returns the HTTP problem of a rejection that is the
// client's mistake in the request itself rather than an outcome of the run's
// state: a reused idempotency key (422). Other outcomes are answered in the
// body (nil).
func rejectionProblem(r commandResult) error {
	if r.Outcome == string(events.OutcomeRejected) && r.Code == string(events.CodeIdempotencyKeyReused) {
		return newProblem(http.StatusUnprocessableEntity, events.CodeIdempotencyKeyReused, r.Detail)
	}
	return nil
}

func asErrors(details []*huma.ErrorDetail) []error {
	out := make([]error, len(details))
	for i, d := range details {
		out[i] = d
	}
	return out
}

// envelopeDetails names each envelope problem by where the client sent it.
func envelopeDetails(ve *commands.ValidationError) []error {
	out := make([]error, len(ve.Problems))
	for i, p := range ve.Problems {
		out[i] = &huma.ErrorDetail{Location: envelopeLocation(p.Field), Message: p.Message}
	}
	return out
}

func envelopeLocation(field string) string {
	switch {
	case strings.HasPrefix(field, "payload."):
		return "body." + strings.TrimPrefix(field, "payload.")
	case field == "runId":
		return "path.runId"
	case field == "idempotencyKey":
		return "header.Idempotency-Key"
	case strings.HasPrefix(field, "actor."):
		return "header.X-Actor-Id"
	case field == "platformSessionId":
		return "body.platformSessionId"
	}
	return "envelope." + field // set by the API itself, not by the client
}
