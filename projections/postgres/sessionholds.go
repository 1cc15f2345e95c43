package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/xbot-runtime/xbot/events"
)

// A session's grants reach a new run in two ways: the executor copies them
// from a finished run's state into its follow-up, on the run's partition,
// and the API copies them from this read model into a CreateRun it sends
// into an existing session. A revoke of a grant is ordered with the second
// by a lock on the session, taken in the transactions of SessionHold and
// RevokeSessionGrant (migration 0010): a create holds it shared from its read
// of the grants until its CreateRun is in Kafka, a revoke exclusively while
// it marks the grant and lists the session's runs. So either the create
// reads the mark and hands the grant on no more, or its CreateRun is in
// Kafka and its run claimed before the revoke lists the runs, and the
// revoke's command to it lands after the create on the run's partition.

// sessionLockKeySQL is the advisory lock's key: a 64-bit hash of the tenant
// (prefixed by its length, so that no two pairs run together) and the
// session. Two sessions that share a hash only wait for each other.
const sessionLockKeySQL = `hashtextextended(length($1)::text || ':' || $1 || $2, 0)`

// querier is what a pool and a transaction share.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// SessionHold is a create's shared lock on a platform session, from the
// read of the session's grants until its CreateRun is sent. Its transaction
// holds one connection of the pool; Release ends it.
type SessionHold struct {
	tx pgx.Tx
}

// HoldSession claims run runID for the platform session sessionID of
// tenantID, under the session's lock taken shared, and reads the grants the
// run inherits (as SessionGrants). Call Release once the run's CreateRun is
// sent, or is not going to be. Creates do not wait for each other; a revoke
// of the session's grant waits for the holds taken before it, and a hold
// taken while a revoke runs waits for it.
func (s *Queries) HoldSession(ctx context.Context, tenantID, sessionID, runID string) (*SessionHold, []events.PermissionGrant, error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("hold session %s: %w", sessionID, err)
	}
	h := &SessionHold{tx: tx}
	grants, err := h.take(ctx, tenantID, sessionID, runID)
	if err != nil {
		_ = h.Release(ctx, false) // the take's error is the one to report
		return nil, nil, fmt.Errorf("hold session %s: %w", sessionID, err)
	}
	return h, grants, nil
}

// holdLockSQL takes the session's lock shared, and lifts the server's
// idle_in_transaction_session_timeout for the hold's transaction: the hold
// is idle while its CreateRun is sent, and a timeout shorter than the send
// would end it (and its lock, and its claim) before a revoke must wait for
// it. The send bounds the hold; Release always ends it.
const holdLockSQL = `SELECT set_config('idle_in_transaction_session_timeout', '0', true),
	pg_advisory_xact_lock_shared(` + sessionLockKeySQL + `)`

func (h *SessionHold) take(ctx context.Context, tenantID, sessionID, runID string) ([]events.PermissionGrant, error) {
	if _, err := h.tx.Exec(ctx, holdLockSQL, tenantID, sessionID); err != nil {
		return nil, err
	}
	if _, err := h.tx.Exec(ctx, `INSERT INTO session_run_claims (tenant_id, platform_session_id, run_id)
VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, tenantID, sessionID, runID); err != nil {
		return nil, err
	}
	return sessionGrants(ctx, h.tx, tenantID, sessionID)
}

// releaseTimeout bounds the commit or rollback that ends a hold, which runs
// even when the request's context is done: the CreateRun may be in Kafka.
const releaseTimeout = 5 * time.Second

// Release ends the hold: it keeps the run's claim when sent (its CreateRun
// was sent, or its send failed in a way that may have written it), and
// drops it otherwise. A hold released twice is released once. A claim
// whose commit fails is lost with the lock; a revoke that then does not
// list the run reaches it only if the read model has it.
func (h *SessionHold) Release(ctx context.Context, sent bool) error {
	if h == nil || h.tx == nil {
		return nil
	}
	tx := h.tx
	h.tx = nil
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
	defer cancel()
	if !sent {
		if err := tx.Rollback(ctx); err != nil && !errors.Is(err, pgx.ErrTxClosed) {
			return fmt.Errorf("release session hold: %w", err)
		}
		return nil
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("release session hold: %w", err)
	}
	return nil
}

// RevokeSessionGrant marks grant grantID of the platform session sessionID
// of tenantID as asked to be revoked, under the session's lock taken
// exclusively, and returns the runs the API claimed in the session
// (HoldSession) whose creates are sent by then. From the mark on no new run
// of the session inherits the grant and SessionGrantsInForce leaves it out.
// Marking again is harmless.
func (s *Queries) RevokeSessionGrant(ctx context.Context, tenantID, sessionID, grantID string) ([]string, error) {
	var runs []string
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock("+sessionLockKeySQL+")", tenantID, sessionID); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO session_grant_revocations (tenant_id, platform_session_id, grant_id)
VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, tenantID, sessionID, grantID); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT run_id FROM session_run_claims
WHERE tenant_id = $1 AND platform_session_id = $2 ORDER BY run_id COLLATE "C"`, tenantID, sessionID)
		if err != nil {
			return err
		}
		runs, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("revoke grant %s of session %s: %w", grantID, sessionID, err)
	}
	return runs, nil
}
