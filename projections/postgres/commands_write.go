package postgres

import (
	"time"

	"github.com/jackc/pgx/v5"
)

// upsertCommandsSQL keeps first_outcome from the first insert. A row is only
// updated by a later event of the same tenant and run, so a command id that
// another tenant or run happens to reuse can never overwrite its outcome.
const upsertCommandsSQL = `INSERT INTO commands (command_id, run_id, tenant_id, type, idempotency_key, outcome,
	first_outcome, code, message, original_command_id, original_outcome, original_code, created_run_id,
	platform_session_id, seq, updated_at)
SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
	$8::text[], $9::text[], $10::text[], $11::text[], $12::text[], $13::text[], $14::text[], $15::bigint[],
	$16::timestamptz[])
ON CONFLICT (command_id) DO UPDATE SET
	platform_session_id = EXCLUDED.platform_session_id, type = EXCLUDED.type, idempotency_key = EXCLUDED.idempotency_key, outcome = EXCLUDED.outcome,
	code = EXCLUDED.code, message = EXCLUDED.message, original_command_id = EXCLUDED.original_command_id,
	original_outcome = EXCLUDED.original_outcome, original_code = EXCLUDED.original_code,
	created_run_id = EXCLUDED.created_run_id, seq = EXCLUDED.seq, updated_at = EXCLUDED.updated_at
WHERE commands.tenant_id = EXCLUDED.tenant_id AND commands.run_id = EXCLUDED.run_id
	AND commands.seq < EXCLUDED.seq`

func queueCommands(b *pgx.Batch, p *batchPlan) {
	n := len(p.cmdOrder)
	if n == 0 {
		return
	}
	cols := make([][]string, 14)
	for i := range cols {
		cols[i] = make([]string, n)
	}
	seqs, updated := make([]int64, n), make([]time.Time, n)
	for i, id := range p.cmdOrder {
		c := p.commands[id]
		for j, v := range []string{c.commandID, c.runID, c.tenantID, c.typ, c.idempotencyKey, c.outcome,
			c.firstOutcome, c.code, c.message, c.originalCommandID, c.originalOutcome, c.originalCode, c.createdRunID,
			c.sessionID} {
			cols[j][i] = clean(v)
		}
		seqs[i], updated[i] = c.seq, ms(c.updatedAt)
	}
	args := make([]any, 0, 16)
	for _, c := range cols {
		args = append(args, c)
	}
	b.Queue(upsertCommandsSQL, append(args, seqs, updated)...)
}
