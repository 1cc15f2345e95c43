package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/xbot-runtime/xbot/events"
)

// AgentSnapshot is the capability snapshot a run of an agent froze.
type AgentSnapshot struct {
	RunID string
	// FrozenAt is when it was frozen (the event's time, Unix milliseconds).
	FrozenAt int64
	Snapshot json.RawMessage
}

// LatestAgentSnapshot returns the snapshot of the tenant's most recently
// created run of agentID that has one; ok is false when there is none.
func (s *Queries) LatestAgentSnapshot(ctx context.Context, tenantID, agentID string) (AgentSnapshot, bool, error) {
	var out AgentSnapshot
	err := s.pool.QueryRow(ctx, `SELECT e.run_id, e.occurred_at, e.envelope -> 'payload' -> 'snapshot'
FROM runs r JOIN run_events e ON e.run_id = r.run_id AND e.tenant_id = r.tenant_id AND e.type = $3
WHERE r.tenant_id = $1 AND r.agent_id = $2 AND r.snapshot_hash <> ''
ORDER BY r.created_at DESC, r.run_id COLLATE "C" DESC
LIMIT 1`, tenantID, agentID, string(events.CapabilitySnapshotFrozen)).Scan(&out.RunID, &out.FrozenAt, &out.Snapshot)
	if errors.Is(err, pgx.ErrNoRows) {
		return AgentSnapshot{}, false, nil
	}
	if err != nil {
		return AgentSnapshot{}, false, fmt.Errorf("latest snapshot of agent %s: %w", agentID, err)
	}
	return out, true, nil
}
