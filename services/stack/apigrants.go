package stack

import (
	"context"

	"github.com/xbot-runtime/xbot/events"
	pgview "github.com/xbot-runtime/xbot/projections/postgres"
	"github.com/xbot-runtime/xbot/services/api"
)

// SessionGrantsInForce reads the session's platform_session grants neither
// revoked nor expired.
func (s *APIReadModels) SessionGrantsInForce(ctx context.Context, tenantID, sessionID string) ([]api.GrantRecord, error) {
	rows, err := s.Queries.SessionGrantsInForce(ctx, tenantID, sessionID)
	return convert(rows, grantRecord), apiErr(err)
}

// SessionGrant reads one grant of the session.
func (s *APIReadModels) SessionGrant(ctx context.Context, tenantID, sessionID, grantID string) (api.GrantRecord, bool, error) {
	g, ok, err := s.Queries.SessionGrant(ctx, tenantID, sessionID, grantID)
	return grantRecord(g), ok, apiErr(err)
}

func grantRecord(g pgview.PermissionGrant) api.GrantRecord {
	return api.GrantRecord{GrantID: g.GrantID, Scope: g.Scope, ToolName: g.ToolName, RuleID: g.RuleID, RunID: g.RunID,
		ItemID: g.ItemID, Actor: events.Actor{Type: g.ActorType, ID: g.ActorID}, GrantedAt: g.GrantedAt,
		ExpiresAt: g.ExpiresAt, RevokedAt: g.RevokedAt}
}

// HoldSession claims runID for the session under its lock taken shared and
// reads the grants the run inherits (pgview.Queries.HoldSession).
func (s *APIReadModels) HoldSession(ctx context.Context, tenantID, sessionID, runID string) (api.SessionHold, []events.PermissionGrant, error) {
	h, grants, err := s.Queries.HoldSession(ctx, tenantID, sessionID, runID)
	if err != nil {
		return nil, nil, err
	}
	return h, grants, nil
}
