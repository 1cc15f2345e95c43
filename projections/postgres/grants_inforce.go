package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/xbot-runtime/xbot/events"
)

// inForceSQL keeps the grants neither revoked nor expired by the database's
// clock, nor asked to be revoked (session_grant_revocations: the revoke's
// commands may not have reached the log yet).
const inForceSQL = ` AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())
	AND NOT EXISTS (SELECT 1 FROM session_grant_revocations r WHERE r.tenant_id = permission_grants.tenant_id
		AND r.platform_session_id = permission_grants.platform_session_id AND r.grant_id = permission_grants.grant_id)`

// SessionGrantsInForce returns the platform_session grants of the platform
// session sessionID of tenantID that are in force: neither revoked nor
// expired, oldest first. A session unknown to the tenant has none.
func (s *Queries) SessionGrantsInForce(ctx context.Context, tenantID, sessionID string) ([]PermissionGrant, error) {
	rows, err := s.pool.Query(ctx, "SELECT "+grantColumnsSQL+
		" FROM permission_grants WHERE tenant_id = $1 AND platform_session_id = $2 AND scope = $3"+inForceSQL+
		grantOrderSQL, tenantID, sessionID, events.ScopePlatformSession)
	if err != nil {
		return nil, fmt.Errorf("grants in force of session %s: %w", sessionID, err)
	}
	out, err := pgx.CollectRows(rows, scanGrant)
	if err != nil {
		return nil, fmt.Errorf("grants in force of session %s: %w", sessionID, err)
	}
	return out, nil
}

// SessionGrant returns the platform_session grant grantID of the platform
// session sessionID of tenantID, revoked or expired as it may be; ok is false
// when the session of that tenant has no such grant.
func (s *Queries) SessionGrant(ctx context.Context, tenantID, sessionID, grantID string) (g PermissionGrant, ok bool, err error) {
	rows, err := s.pool.Query(ctx, "SELECT "+grantColumnsSQL+
		" FROM permission_grants WHERE tenant_id = $1 AND platform_session_id = $2 AND grant_id = $3 AND scope = $4"+
		grantOrderSQL+" LIMIT 1", tenantID, sessionID, grantID, events.ScopePlatformSession)
	if err != nil {
		return g, false, fmt.Errorf("grant %s of session %s: %w", grantID, sessionID, err)
	}
	g, err = pgx.CollectExactlyOneRow(rows, scanGrant)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return g, false, nil
	case err != nil:
		return g, false, fmt.Errorf("grant %s of session %s: %w", grantID, sessionID, err)
	}
	return g, true, nil
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

func unixMs(t *time.Time) int64 {
	if t == nil {
		return 0
	}
	return t.UnixMilli()
}
