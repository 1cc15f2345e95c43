package client

//go:generate go run ./internal/errgen -in ../../../schemas/v1/errors.json -out errors_gen.go

import (
	"errors"
	"fmt"
)

// CodeError is one code of the error registry (schemas/v1/errors.json) with
// the HTTP status and title the registry gives it. The Err… variables of
// errors_gen.go are CodeErrors; compare with errors.Is, which matches any
// *Problem or *RejectedError of the same code.
type CodeError struct {
	Code   string
	Status int
	Title  string
}

// Error describes the code.
func (e *CodeError) Error() string { return e.Code + ": " + e.Title }

// Lookup returns the registry's entry of code; ok is false for a code this
// client does not know (a newer server's).
func Lookup(code string) (e *CodeError, ok bool) {
	e, ok = registry[code]
	return e, ok
}

// Is reports whether target is the sentinel of the problem's code, so that
// errors.Is(err, ErrNotFound) holds for a 404 not_found answer.
func (p *Problem) Is(target error) bool {
	var ce *CodeError
	return errors.As(target, &ce) && p.Code != "" && ce.Code == p.Code
}

// RejectedError is a command the executor refused: its endpoint answered
// 202 with outcome rejected (or duplicate of a rejected original), so nothing
// changed. Code is the stable code (invalid_state, unknown_agent, …), Status
// the HTTP status the registry gives it, Detail the server's explanation, and
// Result the whole answer. errors.Is(err, ErrInvalidState) holds for a
// rejection with code invalid_state.
type RejectedError struct {
	Code   string
	Status int
	Detail string
	Result CommandResult
}

// Error describes the rejection.
func (e *RejectedError) Error() string {
	return fmt.Sprintf("command %s on run %s rejected: %s: %s", e.Result.CommandID, e.Result.RunID, e.Code, e.Detail)
}

// Is reports whether target is the sentinel of the rejection's code.
func (e *RejectedError) Is(target error) bool {
	var ce *CodeError
	return errors.As(target, &ce) && ce.Code == e.Code
}

// rejection is the error of a command answer: a *RejectedError when the
// command (or, for a duplicate, its original) was rejected, else nil.
func rejection(r CommandResult) error {
	code, detail := "", r.Detail
	switch {
	case r.Outcome == OutcomeRejected:
		code = r.Code
	case r.Outcome == OutcomeDuplicate && r.OriginalOutcome == OutcomeRejected:
		code = r.OriginalCode
	default:
		return nil
	}
	status := 0
	if e, ok := Lookup(code); ok {
		status = e.Status
	}
	return &RejectedError{Code: code, Status: status, Detail: detail, Result: r}
}
