package postgres

import (
	"time"

	"github.com/jackc/pgx/v5"
)

const insertRunsSQL = `INSERT INTO runs (run_id, tenant_id, platform_session_id, agent_id, parent_run_id, status,
	pause_reason, error_code, cancel_reason, input, sandbox_key, metadata, last_seq, created_at, updated_at)
SELECT r, te, ps, ag, pr, st, pa, ec, cr, i::jsonb, sk::jsonb, md::jsonb, ls, ca, ua
FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
	$9::text[], $10::text[], $11::text[], $12::text[], $13::bigint[], $14::timestamptz[], $15::timestamptz[])
	AS u(r, te, ps, ag, pr, st, pa, ec, cr, i, sk, md, ls, ca, ua)
ON CONFLICT (run_id) DO UPDATE SET
	tenant_id = EXCLUDED.tenant_id, platform_session_id = EXCLUDED.platform_session_id,
	agent_id = EXCLUDED.agent_id, parent_run_id = EXCLUDED.parent_run_id, status = EXCLUDED.status,
	pause_reason = EXCLUDED.pause_reason, error_code = EXCLUDED.error_code,
	cancel_reason = EXCLUDED.cancel_reason, input = EXCLUDED.input, sandbox_key = EXCLUDED.sandbox_key,
	metadata = EXCLUDED.metadata, last_seq = EXCLUDED.last_seq, created_at = EXCLUDED.created_at,
	updated_at = EXCLUDED.updated_at`

// runColumns holds one array per column of the runs statements.
type runColumns struct {
	ids, tenants, sessions, agents, parents, statuses, pauses, errs, cancels []string
	inputs, keys                                                             []string
	metadata                                                                 []*string
	nullStatus, nullErrs, nullCancels                                        []*string
	lastSeqs                                                                 []int64
	created, updated                                                         []time.Time
}

func queueRunInserts(b *pgx.Batch, p *batchPlan) {
	var c runColumns
	for _, id := range p.advanced {
		r := p.runs[id]
		if !r.inserted {
			continue
		}
		c.ids = append(c.ids, clean(r.runID))
		c.tenants, c.sessions = append(c.tenants, clean(r.tenantID)), append(c.sessions, clean(r.sessionID))
		c.agents, c.parents = append(c.agents, clean(r.agentID)), append(c.parents, clean(r.parentRunID))
		c.statuses, c.pauses = append(c.statuses, r.status), append(c.pauses, clean(r.pauseReason))
		c.errs, c.cancels = append(c.errs, clean(deref(r.errorCode))), append(c.cancels, clean(deref(r.cancelReason)))
		c.inputs, c.keys = append(c.inputs, string(r.input)), append(c.keys, string(r.sandboxKey))
		c.metadata = append(c.metadata, bytesOrNil(r.metadata))
		c.lastSeqs = append(c.lastSeqs, r.lastSeq)
		c.created, c.updated = append(c.created, ms(r.createdAt)), append(c.updated, ms(r.updatedAt))
	}
	if len(c.ids) == 0 {
		return
	}
	b.Queue(insertRunsSQL, c.ids, c.tenants, c.sessions, c.agents, c.parents, c.statuses, c.pauses, c.errs,
		c.cancels, c.inputs, c.keys, c.metadata, c.lastSeqs, c.created, c.updated)
}

const updateRunsSQL = `UPDATE runs AS r SET
	status = COALESCE(u.st, r.status),
	pause_reason = CASE WHEN u.st IS NULL THEN r.pause_reason ELSE u.pa END,
	error_code = COALESCE(u.ec, r.error_code),
	cancel_reason = COALESCE(u.cr, r.cancel_reason),
	last_seq = u.ls,
	updated_at = u.ua
FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::timestamptz[])
	AS u(id, st, pa, ec, cr, ls, ua)
WHERE r.run_id = u.id`

func queueRunUpdates(b *pgx.Batch, p *batchPlan) {
	var c runColumns
	for _, id := range p.advanced {
		r := p.runs[id]
		if r.inserted {
			continue
		}
		c.ids = append(c.ids, clean(r.runID))
		c.nullStatus = append(c.nullStatus, stringOrNil(r.status))
		c.pauses = append(c.pauses, clean(r.pauseReason))
		c.nullErrs, c.nullCancels = append(c.nullErrs, cleanPtr(r.errorCode)), append(c.nullCancels, cleanPtr(r.cancelReason))
		c.lastSeqs = append(c.lastSeqs, r.lastSeq)
		c.updated = append(c.updated, ms(r.updatedAt))
	}
	if len(c.ids) == 0 {
		return
	}
	b.Queue(updateRunsSQL, c.ids, c.nullStatus, c.pauses, c.nullErrs, c.nullCancels, c.lastSeqs, c.updated)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func cleanPtr(s *string) *string {
	if s == nil {
		return nil
	}
	v := clean(*s)
	return &v
}

func stringOrNil(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func bytesOrNil(b []byte) *string {
	if b == nil {
		return nil
	}
	s := string(b)
	return &s
}
