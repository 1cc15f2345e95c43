package postgres

import (
	"time"

	"github.com/jackc/pgx/v5"
)

// insertRunsSQL writes the runs accepted in the batch; an existing row fails
// it, as in insertItemsSQL.
const insertRunsSQL = `INSERT INTO runs (run_id, tenant_id, platform_session_id, agent_id, parent_run_id, status,
	pause_reason, error_code, cancel_reason, input, sandbox_key, metadata, last_seq, created_at, updated_at,
	snapshot_hash, model_calls, prompt_tokens, completion_tokens, total_tokens, compactions, accepted_partition,
	accepted_offset)
SELECT r, te, ps, ag, pr, st, pa, ec, cr, i::jsonb, sk::jsonb, md::jsonb, ls, ca, ua, sh, mc, pt, ct, tt, cp, ap, ao
FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
	$9::text[], $10::text[], $11::text[], $12::text[], $13::bigint[], $14::timestamptz[], $15::timestamptz[],
	$16::text[], $17::bigint[], $18::bigint[], $19::bigint[], $20::bigint[], $21::bigint[], $22::int[], $23::bigint[])
	AS u(r, te, ps, ag, pr, st, pa, ec, cr, i, sk, md, ls, ca, ua, sh, mc, pt, ct, tt, cp, ap, ao)`

// upsertRunsSQL is insertRunsSQL replacing an existing row (a run accepted
// again, which events.Fold would refuse); see insertItemsSQL.
const upsertRunsSQL = insertRunsSQL + `
ON CONFLICT (run_id) DO UPDATE SET
	tenant_id = EXCLUDED.tenant_id, platform_session_id = EXCLUDED.platform_session_id,
	agent_id = EXCLUDED.agent_id, parent_run_id = EXCLUDED.parent_run_id, status = EXCLUDED.status,
	pause_reason = EXCLUDED.pause_reason, error_code = EXCLUDED.error_code,
	cancel_reason = EXCLUDED.cancel_reason, input = EXCLUDED.input, sandbox_key = EXCLUDED.sandbox_key,
	metadata = EXCLUDED.metadata, last_seq = EXCLUDED.last_seq, created_at = EXCLUDED.created_at,
	updated_at = EXCLUDED.updated_at, snapshot_hash = EXCLUDED.snapshot_hash,
	model_calls = EXCLUDED.model_calls, prompt_tokens = EXCLUDED.prompt_tokens,
	completion_tokens = EXCLUDED.completion_tokens, total_tokens = EXCLUDED.total_tokens,
	compactions = EXCLUDED.compactions, accepted_partition = EXCLUDED.accepted_partition,
	accepted_offset = EXCLUDED.accepted_offset`

// runColumns holds one array per column of the runs statements.
type runColumns struct {
	ids, tenants, sessions, agents, parents, statuses, pauses, errs, cancels []string
	inputs, keys, hashes                                                     []string
	metadata                                                                 []*string
	nullStatus, nullErrs, nullCancels, nullHashes                            []*string
	lastSeqs, calls, prompt, completion, total, compactions, offsets         []int64
	partitions                                                               []int32
	created, updated                                                         []time.Time
}

// addUsage adds the usage columns of r.
func (c *runColumns) addUsage(r *runChange) {
	u := r.usage
	c.calls, c.prompt = append(c.calls, u.ModelCalls), append(c.prompt, u.PromptTokens)
	c.completion, c.total = append(c.completion, u.CompletionTokens), append(c.total, u.TotalTokens)
	c.compactions = append(c.compactions, u.Compactions)
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
		c.hashes = append(c.hashes, deref(r.snapshotHash))
		c.addUsage(r)
		c.partitions, c.offsets = append(c.partitions, r.acceptedPartition), append(c.offsets, r.acceptedOffset)
	}
	if len(c.ids) == 0 {
		return
	}
	sql := insertRunsSQL
	if p.upsert {
		sql = upsertRunsSQL
	}
	b.Queue(sql, c.ids, c.tenants, c.sessions, c.agents, c.parents, c.statuses, c.pauses, c.errs,
		c.cancels, c.inputs, c.keys, c.metadata, c.lastSeqs, c.created, c.updated, c.hashes, c.calls, c.prompt,
		c.completion, c.total, c.compactions, c.partitions, c.offsets)
}

// updateRunsSQL applies the batch's changes to existing rows; the usage
// columns are added to, which is idempotent because a batch only plans
// events not applied before (under the partition lock).
const updateRunsSQL = `UPDATE runs AS r SET
	status = COALESCE(u.st, r.status),
	pause_reason = CASE WHEN u.st IS NULL THEN r.pause_reason ELSE u.pa END,
	error_code = COALESCE(u.ec, r.error_code),
	cancel_reason = COALESCE(u.cr, r.cancel_reason),
	snapshot_hash = COALESCE(u.sh, r.snapshot_hash),
	model_calls = r.model_calls + u.mc,
	prompt_tokens = r.prompt_tokens + u.pt,
	completion_tokens = r.completion_tokens + u.ct,
	total_tokens = r.total_tokens + u.tt,
	compactions = r.compactions + u.cp,
	last_seq = u.ls,
	updated_at = u.ua
FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::timestamptz[],
	$8::text[], $9::bigint[], $10::bigint[], $11::bigint[], $12::bigint[], $13::bigint[])
	AS u(id, st, pa, ec, cr, ls, ua, sh, mc, pt, ct, tt, cp)
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
		c.nullHashes = append(c.nullHashes, r.snapshotHash)
		c.addUsage(r)
	}
	if len(c.ids) == 0 {
		return
	}
	b.Queue(updateRunsSQL, c.ids, c.nullStatus, c.pauses, c.nullErrs, c.nullCancels, c.lastSeqs, c.updated,
		c.nullHashes, c.calls, c.prompt, c.completion, c.total, c.compactions)
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
