package postgres

import (
	"context"
	"fmt"
)

// claimSessionSQL inserts the claim unless the session has an owner, and
// returns the owner either way in one statement: the primary key of
// session_owners decides between concurrent first claims, and the loser
// reads the winner's row (ON CONFLICT DO UPDATE locks and returns it).
const claimSessionSQL = `INSERT INTO session_owners (tenant_id, platform_session_id, owner_actor_id)
VALUES ($1, $2, $3)
ON CONFLICT (tenant_id, platform_session_id) DO UPDATE SET owner_actor_id = session_owners.owner_actor_id
RETURNING owner_actor_id`

// ClaimSession makes actorID the owner of the platform session sessionID of
// tenantID unless the session already has one, and returns its owner. Two
// concurrent first claims get the same answer.
func (s *Queries) ClaimSession(ctx context.Context, tenantID, sessionID, actorID string) (string, error) {
	var owner string
	if err := s.pool.QueryRow(ctx, claimSessionSQL, tenantID, sessionID, actorID).Scan(&owner); err != nil {
		return "", fmt.Errorf("claim session %s: %w", sessionID, err)
	}
	return owner, nil
}
