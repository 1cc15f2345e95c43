package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/xbot-runtime/xbot/events"
)

// GetSession returns the platform session sessionID of tenantID, or
// ErrNotFound if the tenant has no run in such a session.
func (s *Store) GetSession(ctx context.Context, tenantID, sessionID string) (Session, error) {
	var v Session
	err := s.pool.QueryRow(ctx, `SELECT tenant_id, platform_session_id, first_run_id, last_run_id, last_run_status,
	run_count, first_run_at, last_activity_at
FROM sessions WHERE tenant_id = $1 AND platform_session_id = $2`, tenantID, sessionID).Scan(
		&v.TenantID, &v.PlatformSessionID, &v.FirstRunID, &v.LastRunID, &v.LastRunStatus, &v.RunCount,
		&v.FirstRunAt, &v.LastActivityAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return Session{}, fmt.Errorf("session %s: %w", sessionID, ErrNotFound)
	}
	if err != nil {
		return Session{}, fmt.Errorf("get session %s: %w", sessionID, err)
	}
	v.FirstRunAt, v.LastActivityAt = v.FirstRunAt.UTC(), v.LastActivityAt.UTC()
	return v, nil
}

// grantColumnsSQL selects a PermissionGrant.
const grantColumnsSQL = `run_id, seq, tenant_id, platform_session_id, item_id, command_id, scope, tool_name,
	granted_at, grant_id, rule_id, actor_type, actor_id`

// grantOrderSQL orders grants oldest first, then by where they were given.
const grantOrderSQL = ` ORDER BY granted_at, run_id COLLATE "C", seq`

func scanGrant(row pgx.CollectableRow) (PermissionGrant, error) {
	var g PermissionGrant
	err := row.Scan(&g.RunID, &g.Seq, &g.TenantID, &g.PlatformSessionID, &g.ItemID, &g.CommandID, &g.Scope,
		&g.ToolName, &g.GrantedAt, &g.GrantID, &g.RuleID, &g.ActorType, &g.ActorID)
	g.GrantedAt = g.GrantedAt.UTC()
	return g, err
}

// ListPermissionGrants returns the grants applied in the platform session
// sessionID of tenantID, of every scope, oldest first (then by run id and
// seq). A session unknown to the tenant has none.
func (s *Store) ListPermissionGrants(ctx context.Context, tenantID, sessionID string) ([]PermissionGrant, error) {
	rows, err := s.pool.Query(ctx, "SELECT "+grantColumnsSQL+
		" FROM permission_grants WHERE tenant_id = $1 AND platform_session_id = $2"+grantOrderSQL, tenantID, sessionID)
	if err != nil {
		return nil, fmt.Errorf("list grants of session %s: %w", sessionID, err)
	}
	out, err := pgx.CollectRows(rows, scanGrant)
	if err != nil {
		return nil, fmt.Errorf("list grants of session %s: %w", sessionID, err)
	}
	return out, nil
}

// SessionGrants returns the platform_session grants given in any run of the
// platform session sessionID of tenantID, in the order ListPermissionGrants
// lists them: the grants a new run of the session inherits
// (CreateRunPayload.SessionGrants). An empty sessionID, or a session unknown
// to the tenant, has none.
func (s *Store) SessionGrants(ctx context.Context, tenantID, sessionID string) ([]events.PermissionGrant, error) {
	if sessionID == "" {
		return nil, nil
	}
	rows, err := s.pool.Query(ctx, "SELECT "+grantColumnsSQL+
		" FROM permission_grants WHERE tenant_id = $1 AND platform_session_id = $2 AND scope = $3"+grantOrderSQL,
		tenantID, sessionID, events.ScopePlatformSession)
	if err != nil {
		return nil, fmt.Errorf("session grants of %s: %w", sessionID, err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (events.PermissionGrant, error) {
		g, err := scanGrant(row)
		return events.PermissionGrant{GrantID: g.GrantID, Scope: g.Scope, ToolName: g.ToolName, RuleID: g.RuleID,
			RunID: g.RunID, ItemID: g.ItemID, Actor: events.Actor{Type: g.ActorType, ID: g.ActorID}}, err
	})
	if err != nil {
		return nil, fmt.Errorf("session grants of %s: %w", sessionID, err)
	}
	return out, nil
}
