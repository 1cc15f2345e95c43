package postgres

import (
	"context"
	"fmt"
)

// claimKeySQL records the claim unless the key has one, and returns the
// standing claim either way in one statement: the primary key decides
// between concurrent first claims and the loser reads the winner's row.
const claimKeySQL = `INSERT INTO idempotency_claims (tenant_id, idempotency_key, fingerprint, run_id)
VALUES ($1, $2, $3, $4)
ON CONFLICT (tenant_id, idempotency_key) DO UPDATE SET fingerprint = idempotency_claims.fingerprint
RETURNING fingerprint, run_id`

// ClaimIdempotencyKey makes (fingerprint, runID) the request that tenantID's
// CreateRun idempotency key stands for unless the key already stands for
// one, and returns the standing claim. Two concurrent first claims get the
// same answer.
func (s *Queries) ClaimIdempotencyKey(ctx context.Context, tenantID, key, fingerprint, runID string) (string, string, error) {
	var fp, run string
	if err := s.pool.QueryRow(ctx, claimKeySQL, tenantID, key, fingerprint, runID).Scan(&fp, &run); err != nil {
		return "", "", fmt.Errorf("claim idempotency key: %w", err)
	}
	return fp, run, nil
}
