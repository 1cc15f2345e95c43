package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Session is one row of the sessions read model: an aggregate of the runs
// of one platform session of a tenant.
type Session struct {
	TenantID          string    `json:"tenantId"`
	PlatformSessionID string    `json:"platformSessionId"`
	FirstRunID        string    `json:"firstRunId"`    // earliest created (run id breaks ties)
	LastRunID         string    `json:"lastRunId"`     // latest created
	LastRunStatus     string    `json:"lastRunStatus"` // status of LastRunID
	RunCount          int64     `json:"runCount"`
	FirstRunAt        time.Time `json:"firstRunAt"`     // created_at of FirstRunID
	LastActivityAt    time.Time `json:"lastActivityAt"` // latest occurredAt of any event of the runs
}

// GetSession returns the platform session sessionID of tenantID, or
// ErrNotFound if the tenant has no run in such a session.
func (s *Queries) GetSession(ctx context.Context, tenantID, sessionID string) (Session, error) {
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
