package postgres

import (
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/xbot-runtime/xbot/events"
)

// grantRow is a permission_grants row.
type grantRow struct {
	runID, tenantID, sessionID, itemID, commandID, scope, toolName string
	grantID, ruleID, actorType, actorID                            string
	seq, grantedAt, expiresAt                                      int64
}

func (p *batchPlan) grant(e events.Envelope) error {
	var v events.PermissionGrantPayload
	if err := decodePayload(e, &v); err != nil {
		return err
	}
	item := v.ItemID
	if item == "" {
		item = e.ItemID
	}
	p.grants = append(p.grants, grantRow{runID: e.RunID, tenantID: e.TenantID, sessionID: e.PlatformSessionID,
		itemID: clean(item), commandID: e.CommandID, scope: clean(v.Scope), toolName: clean(v.ToolName),
		grantID: clean(v.GrantID), ruleID: clean(v.RuleID), actorType: clean(v.Actor.Type), actorID: clean(v.Actor.ID),
		seq: e.Seq, grantedAt: e.OccurredAt, expiresAt: v.ExpiresAt})
	return nil
}

const insertGrantsSQL = `INSERT INTO permission_grants (run_id, seq, tenant_id, platform_session_id, item_id,
	command_id, scope, tool_name, granted_at, grant_id, rule_id, actor_type, actor_id, expires_at)
SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
	$8::text[], $9::timestamptz[], $10::text[], $11::text[], $12::text[], $13::text[], $14::timestamptz[])
ON CONFLICT (run_id, seq) DO NOTHING`

func queueGrants(b *pgx.Batch, p *batchPlan) {
	n := len(p.grants)
	if n == 0 {
		return
	}
	cols := make([][]string, 11)
	for i := range cols {
		cols[i] = make([]string, n)
	}
	seqs, at, expires := make([]int64, n), make([]time.Time, n), make([]*time.Time, n)
	for i, g := range p.grants {
		for j, v := range []string{g.runID, g.tenantID, g.sessionID, g.itemID, g.commandID, g.scope, g.toolName,
			g.grantID, g.ruleID, g.actorType, g.actorID} {
			cols[j][i] = v
		}
		seqs[i], at[i] = g.seq, ms(g.grantedAt)
		if g.expiresAt > 0 {
			t := ms(g.expiresAt)
			expires[i] = &t
		}
	}
	b.Queue(insertGrantsSQL, cols[0], seqs, cols[1], cols[2], cols[3], cols[4], cols[5], cols[6], at,
		cols[7], cols[8], cols[9], cols[10], expires)
}
