package events

import (
	"errors"
	"fmt"
)

// ErrUnknownType is returned for an event type that is not in the catalog.
var ErrUnknownType = errors.New("unknown event type")

// SeqGapError reports an event whose seq is not the next one of its run:
// folding it, or projecting it, would skip Expected..Actual-1 (or apply
// Actual twice). Fold and every projector report a gap with it.
type SeqGapError struct {
	RunID    string
	Expected int64
	Actual   int64
}

func (e *SeqGapError) Error() string {
	return fmt.Sprintf("run %s: seq gap: expected seq %d, got %d", e.RunID, e.Expected, e.Actual)
}

// IllegalTransitionError reports an event that the run's state does not allow.
type IllegalTransitionError struct {
	RunID  string
	Seq    int64
	From   Status
	Type   Type
	Reason string
}

func (e *IllegalTransitionError) Error() string {
	msg := fmt.Sprintf("run %s seq %d: %s not allowed in state %s", e.RunID, e.Seq, e.Type, e.From.orCreated())
	if e.Reason != "" {
		msg += ": " + e.Reason
	}
	return msg
}

// PayloadError reports a payload that does not decode or misses a required field.
type PayloadError struct {
	Type Type
	Seq  int64
	Err  error
}

func (e *PayloadError) Error() string {
	return fmt.Sprintf("seq %d: %s payload: %v", e.Seq, e.Type, e.Err)
}

func (e *PayloadError) Unwrap() error { return e.Err }
