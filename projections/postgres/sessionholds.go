package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

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
// reads the mark and hands the grant on no more, or its run is claimed
// before the revoke lists the runs, and the revoke's command reaches it:
// after its create on the run's partition when the hold lasted until the
// CreateRun was in Kafka, and otherwise (the hold's bound ended it first)
// possibly before it, when the executor refuses the revoke naming the grant
// and the create, landing later, does not hand that grant on.

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
// holds one connection of the pool; Release ends it, and so does the
// server once it has been idle for the hold's bound (holdIdleTimeout).
type SessionHold struct {
	tx      pgx.Tx
	pool    *pgxpool.Pool
	claim   runClaim
	claimed bool // this hold made the claim (not an earlier create of the run)
}

// runClaim is a row of session_run_claims.
type runClaim struct{ tenant, session, run string }

// HoldSession claims run runID for the platform session sessionID of
// tenantID, then takes the session's lock shared and reads the grants the
// run inherits (as SessionGrants). Call Release once the run's CreateRun is
// sent, or is not going to be; it keeps the claim an earlier create of the
// same run made. Creates do not wait for each other; a revoke
// of the session's grant waits for the holds taken before it, and a hold
// taken while a revoke runs waits for it.
//
// The claim is committed before the lock is taken, so that a revoke lists
// the run however the hold ends: released, or ended by the server after
// holdIdleTimeout (an API process that hung while it sent). A create whose
// CreateRun then reaches the run's partition after the revoke's command
// does not inherit the grant: the executor remembers a revoke that came
// before its run (events.RunState.PreRevokedGrants).
func (s *Queries) HoldSession(ctx context.Context, tenantID, sessionID, runID string) (*SessionHold, []events.PermissionGrant, error) {
	h := &SessionHold{pool: s.pool, claim: runClaim{tenantID, sessionID, runID}}
	tag, err := s.pool.Exec(ctx, `INSERT INTO session_run_claims (tenant_id, platform_session_id, run_id)
VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, tenantID, sessionID, runID)
	if err != nil {
		return nil, nil, fmt.Errorf("hold session %s: claim run: %w", sessionID, err)
	}
	h.claimed = tag.RowsAffected() > 0
	if h.tx, err = s.pool.Begin(ctx); err != nil {
		_ = h.unclaim(context.WithoutCancel(ctx))
		return nil, nil, fmt.Errorf("hold session %s: %w", sessionID, err)
	}
	grants, err := h.take(ctx, tenantID, sessionID, s.holdIdle)
	if err != nil {
		_ = h.Release(ctx, false) // the take's error is the one to report
		return nil, nil, fmt.Errorf("hold session %s: %w", sessionID, err)
	}
	return h, grants, nil
}

// holdIdleTimeout bounds how long a hold stays idle in its transaction
// while its CreateRun is sent: the server ends it after that, with its lock,
// so a revoke waits at most that long for an API process that hung in the
// middle of a send. A send that outlives it is still safe (HoldSession).
const holdIdleTimeout = time.Minute

// holdLockSQL takes the session's lock shared, and sets the server's
// idle_in_transaction_session_timeout of the hold's transaction to the
// hold's bound ($3, ms): a server's shorter timeout would end holds in the
// middle of ordinary sends, and none (the default) would let a hung API
// process block the session's revokes for good.
const holdLockSQL = `SELECT set_config('idle_in_transaction_session_timeout', $3, true),
	pg_advisory_xact_lock_shared(` + sessionLockKeySQL + `)`

func (h *SessionHold) take(ctx context.Context, tenantID, sessionID string, idle time.Duration) ([]events.PermissionGrant, error) {
	if _, err := h.tx.Exec(ctx, holdLockSQL, tenantID, sessionID, strconv.FormatInt(max(idle.Milliseconds(), 1), 10)); err != nil {
		return nil, err
	}
	return sessionGrants(ctx, h.tx, tenantID, sessionID)
}

// releaseTimeout bounds the commit or rollback that ends a hold, which runs
// even when the request's context is done: the CreateRun may be in Kafka.
const releaseTimeout = 5 * time.Second

// Release ends the hold: it keeps the run's claim when sent (its CreateRun
// was sent, or its send failed in a way that may have written it), and
// deletes it otherwise. A hold released twice is released once. A hold the
// server ended already (holdIdleTimeout) reports that its transaction is
// gone; its claim stays, or is deleted, all the same.
func (h *SessionHold) Release(ctx context.Context, sent bool) error {
	if h == nil || h.tx == nil {
		return nil
	}
	tx := h.tx
	h.tx = nil
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
	defer cancel()
	if !sent {
		err := tx.Rollback(ctx)
		if errors.Is(err, pgx.ErrTxClosed) {
			err = nil
		}
		if cerr := h.unclaim(ctx); cerr != nil {
			err = errors.Join(err, fmt.Errorf("drop the run's claim: %w", cerr))
		}
		if err != nil {
			return fmt.Errorf("release session hold: %w", err)
		}
		return nil
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("release session hold: %w", err)
	}
	return nil
}

// unclaim deletes the run's claim if this hold made it: one an earlier
// create of the run made (a retry's first send) is kept.
func (h *SessionHold) unclaim(ctx context.Context) error {
	if !h.claimed {
		return nil
	}
	_, err := h.pool.Exec(ctx, `DELETE FROM session_run_claims
WHERE tenant_id = $1 AND platform_session_id = $2 AND run_id = $3`, h.claim.tenant, h.claim.session, h.claim.run)
	return err
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
