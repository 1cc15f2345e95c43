package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/xbot-runtime/xbot/events"
)

// PermissionGrant is one row of permission_grants: one
// runtime.permission_grant.applied event, in run RunID at Seq.
type PermissionGrant struct {
	RunID             string    `json:"runId"`
	Seq               int64     `json:"seq"`
	TenantID          string    `json:"tenantId"`
	PlatformSessionID string    `json:"platformSessionId,omitempty"`
	ItemID            string    `json:"itemId,omitempty"`
	CommandID         string    `json:"commandId,omitempty"`
	Scope             string    `json:"scope"`
	ToolName          string    `json:"toolName"`
	GrantedAt         time.Time `json:"grantedAt"`
	GrantID           string    `json:"grantId,omitempty"`
	RuleID            string    `json:"ruleId,omitempty"`
	ActorType         string    `json:"actorType,omitempty"`
	ActorID           string    `json:"actorId,omitempty"`
	// ExpiresAt is when a grant given with a TTL lapses; nil: never.
	ExpiresAt *time.Time `json:"expiresAt,omitempty"`
	// RevokedAt, RevokeReason and RevokedBy say when, why and by whom the
	// grant was revoked; RevokedAt is nil for a grant not revoked.
	RevokedAt     *time.Time `json:"revokedAt,omitempty"`
	RevokeReason  string     `json:"revokeReason,omitempty"`
	RevokedByType string     `json:"revokedByType,omitempty"`
	RevokedByID   string     `json:"revokedById,omitempty"`
}

// grantColumnsSQL selects a PermissionGrant.
const grantColumnsSQL = `run_id, seq, tenant_id, platform_session_id, item_id, command_id, scope, tool_name,
	granted_at, grant_id, rule_id, actor_type, actor_id, expires_at, revoked_at, revoke_reason, revoked_by_type,
	revoked_by_id`

// grantOrderSQL orders grants oldest first, then by where they were given.
const grantOrderSQL = ` ORDER BY granted_at, run_id COLLATE "C", seq`

func scanGrant(row pgx.CollectableRow) (PermissionGrant, error) {
	var g PermissionGrant
	err := row.Scan(&g.RunID, &g.Seq, &g.TenantID, &g.PlatformSessionID, &g.ItemID, &g.CommandID, &g.Scope,
		&g.ToolName, &g.GrantedAt, &g.GrantID, &g.RuleID, &g.ActorType, &g.ActorID, &g.ExpiresAt, &g.RevokedAt,
		&g.RevokeReason, &g.RevokedByType, &g.RevokedByID)
	g.GrantedAt = g.GrantedAt.UTC()
	g.ExpiresAt, g.RevokedAt = utc(g.ExpiresAt), utc(g.RevokedAt)
	return g, err
}

// ListPermissionGrants returns the grants applied in the platform session
// sessionID of tenantID, of every scope, oldest first (then by run id and
// seq). A session unknown to the tenant has none.
func (s *Queries) ListPermissionGrants(ctx context.Context, tenantID, sessionID string) ([]PermissionGrant, error) {
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

// SessionGrants returns the platform_session grants in force (not revoked,
// not expired, not asked to be revoked) given in any run of the platform
// session sessionID of tenantID, in the order ListPermissionGrants lists
// them. An empty sessionID, or a session unknown to the tenant, has none. A
// create hands these to its run under a SessionHold, which reads them the
// same way.
func (s *Queries) SessionGrants(ctx context.Context, tenantID, sessionID string) ([]events.PermissionGrant, error) {
	return sessionGrants(ctx, s.pool, tenantID, sessionID)
}

// sessionGrantsSQL selects a session's grants in force.
const sessionGrantsSQL = "SELECT " + grantColumnsSQL +
	" FROM permission_grants WHERE tenant_id = $1 AND platform_session_id = $2 AND scope = $3" + inForceSQL + grantOrderSQL

func sessionGrants(ctx context.Context, q querier, tenantID, sessionID string) ([]events.PermissionGrant, error) {
	if sessionID == "" {
		return nil, nil
	}
	rows, err := q.Query(ctx, sessionGrantsSQL, tenantID, sessionID, events.ScopePlatformSession)
	if err != nil {
		return nil, fmt.Errorf("session grants of %s: %w", sessionID, err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (events.PermissionGrant, error) {
		g, err := scanGrant(row)
		return events.PermissionGrant{GrantID: g.GrantID, Scope: g.Scope, ToolName: g.ToolName, RuleID: g.RuleID,
			RunID: g.RunID, ItemID: g.ItemID, Actor: events.Actor{Type: g.ActorType, ID: g.ActorID},
			ExpiresAt: unixMs(g.ExpiresAt)}, err
	})
	if err != nil {
		return nil, fmt.Errorf("session grants of %s: %w", sessionID, err)
	}
	return out, nil
}
