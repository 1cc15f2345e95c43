package postgres

import (
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/xbot-runtime/xbot/events"
)

// grantRevocation is a grant its granting run revoked. Every run of the
// session that holds the grant records the revocation; the read model takes
// the granting run's, so that a rebuild, which may apply the partitions in
// another order, writes the same row.
type grantRevocation struct {
	runID, grantID, reason, actorType, actorID string
	at                                         int64
}

func (p *batchPlan) revokeGrant(e events.Envelope) error {
	var v events.PermissionGrantRevokedPayload
	if err := decodePayload(e, &v); err != nil {
		return err
	}
	p.revocations = append(p.revocations, grantRevocation{runID: e.RunID, grantID: clean(v.GrantID),
		reason: clean(v.Reason), actorType: clean(v.Actor.Type), actorID: clean(v.Actor.ID), at: e.OccurredAt})
	return nil
}

// revokeGrantsSQL marks revoked the grants given in the run that records
// their revocation; a revocation recorded by another run changes no row.
const revokeGrantsSQL = `UPDATE permission_grants g
SET revoked_at = r.at, revoke_reason = r.reason, revoked_by_type = r.actor_type, revoked_by_id = r.actor_id
FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::text[], $5::text[], $6::text[])
	AS r(run_id, grant_id, at, reason, actor_type, actor_id)
WHERE g.run_id = r.run_id AND g.grant_id = r.grant_id AND g.revoked_at IS NULL`

// queueRevocations runs after queueGrants, so that a grant given and
// revoked in one batch is first inserted.
func queueRevocations(b *pgx.Batch, p *batchPlan) {
	n := len(p.revocations)
	if n == 0 {
		return
	}
	runs, grants, reasons, types, ids := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	at := make([]time.Time, n)
	for i, r := range p.revocations {
		runs[i], grants[i], reasons[i], types[i], ids[i], at[i] = r.runID, r.grantID, r.reason, r.actorType, r.actorID, ms(r.at)
	}
	b.Queue(revokeGrantsSQL, runs, grants, at, reasons, types, ids)
}
