// Package eventstest builds legal run logs for tests, in the spirit of
// net/http/httptest: a Log appends one run's events the way the executor
// does, so a test case that breaks the protocol fails where it is written,
// not in the reader under test.
//
// Every event a Log appends is sealed with the run's identity, the next seq
// (1, 2, 3, …), a derived event id and the Log's clock, then folded with
// events.Fold; an event the run state machine refuses fails the test at
// once. Nothing is random: the same calls build the same log byte for byte,
// so golden files may depend on it. Event ids are EventID(runID, seq); the
// clock starts at Epoch and advances one second per event unless Clock says
// otherwise.
//
// Beside Add, which appends any draft, the Log has typed helpers for the
// common shapes: the run's lifecycle (Accepted, Started, Paused, Resumed,
// Completed, Failed, Cancelled, Expire, Compacted), items and model
// responses (ItemStarted, Deltas, ItemCompleted, ItemFailed, Response,
// ToolStarted, ToolCompleted, Steer), command outcomes (CommandAccepted,
// CommandApplied, CommandRejected, CommandNoEffect, CommandDuplicate) and
// approvals (Ask, Decide). Decide records a decision the way admission does
// (commands' SubmitApprovalDecision decider), which this package's tests
// check.
//
// State, Last and First read the log back; Interleave merges the logs of
// several runs as runs sharing a partition interleave.
//
// Golden compares what a reader made of a log with a file in testdata/;
// the -update flag, which this package registers, rewrites the file
// instead.
//
// The package imports only events and the standard library; it is meant
// for _test.go files of any package.
package eventstest
