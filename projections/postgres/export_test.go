package postgres

import (
	"context"
	"time"
)

// SetRecheckInterval changes WaitCommand's fallback poll, so a test can
// prove that a notification, not the poll, woke a waiter.
func SetRecheckInterval(s *Store, d time.Duration) { s.recheck = d }

// SetHoldIdleTimeout changes how long a session hold may stay idle before
// the server ends it.
func SetHoldIdleTimeout(s *Store, d time.Duration) { s.holdIdle = d }

// SetWriters makes the projector write a batch of at least splitAt records
// with up to writers transactions at once.
func SetWriters(s *Store, writers, splitAt int) { s.writers, s.splitAt = writers, splitAt }

// ListApprovalsQuery is the SQL and arguments ListApprovals sends for f,
// limit last.
func ListApprovalsQuery(f ApprovalFilter, limit int) (string, []any, error) {
	sql, args, err := listApprovalsQuery(f)
	return sql, append(args, limit), err
}

// GetRunSQL is the SQL GetRun sends.
const GetRunSQL = getRunSQL

// AnalyzeGrown runs the projector's check of the view's tables now.
func AnalyzeGrown(ctx context.Context, s *Store) { s.analyzeGrown(ctx) }

// PruneRunClaims runs the projector's prune of the session run claims now.
func PruneRunClaims(ctx context.Context, s *Store) { s.pruneRunClaims(ctx) }

// WaitAnalyzed waits for the projector's check of the view's tables in
// flight, if any.
func WaitAnalyzed(s *Store) { s.analyzing.Wait() }

// SessionStateSQL are the statements GetSessionState reads a session's
// state with, by what they read; each takes $1 tenant and $2 session.
func SessionStateSQL() map[string]string {
	return map[string]string{"head": sessionHeadSQL(sessionRunColumns), "pending": pendingInteractionsSQL,
		"open": openReplySQL, "closed": closedInteractionsSQL, "queued": queuedInputsSQL, "admitted": admittedInputsSQL}
}
