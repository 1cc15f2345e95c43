// Package events holds the facts of xbot: the event envelope, the event
// catalog with its payload types, the run state machine, and the words every
// reader of the log shares: command outcomes (Outcome), stable error codes
// (Code, registered in schemas/v1/errors.json) and the seq gap error.
//
// Guarantees: Fold is a pure function. Folding a run's committed events from
// the zero RunState in seq order either succeeds for every event or returns a
// typed error (SeqGapError, IllegalTransitionError, PayloadError) naming the
// first event that breaks the protocol. The executor folds every event before
// it appends it and the projectors fold what they read, so a log that passed
// through the executor always folds cleanly.
//
// This package imports only the standard library.
package events
