package postgres

import (
	"context"
	"fmt"
	"time"
)

// Heartbeat records that instance of projector is alive now (server time).
func (s *Projector) Heartbeat(ctx context.Context, projector, instance string) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO projector_heartbeats (projector, instance, beat_at)
VALUES ($1, $2, now()) ON CONFLICT (projector, instance) DO UPDATE SET beat_at = now()`, projector, instance)
	if err != nil {
		return fmt.Errorf("heartbeat of %s/%s: %w", projector, instance, err)
	}
	return nil
}

// LastHeartbeat returns the latest heartbeat of any instance of projector,
// or ErrNotFound if none was ever recorded.
func (s *Queries) LastHeartbeat(ctx context.Context, projector string) (time.Time, error) {
	var at *time.Time
	err := s.pool.QueryRow(ctx, "SELECT max(beat_at) FROM projector_heartbeats WHERE projector = $1",
		projector).Scan(&at)
	if err != nil {
		return time.Time{}, fmt.Errorf("last heartbeat of %s: %w", projector, err)
	}
	if at == nil {
		return time.Time{}, fmt.Errorf("heartbeat of %s: %w", projector, ErrNotFound)
	}
	return at.UTC(), nil
}
