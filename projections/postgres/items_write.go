package postgres

import (
	"time"

	"github.com/jackc/pgx/v5"
)

// insertItemsSQL writes items that started in the batch whole. An existing
// row (an item started again, which events.Fold would refuse) fails it with
// a unique violation, and the batch is written again with upsertItemsSQL,
// which replaces the row: a plain insert spares every new row the upsert's
// check for a conflict.
const insertItemsSQL = `INSERT INTO items (run_id, item_id, tenant_id, type, status, started_seq, updated_seq,
	tool_name, tool_call_id, input, input_truncated, output, output_truncated, error_code, error_message,
	exit_code, started_at, completed_at, duration_ms, platform_session_id)
SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::bigint[],
	$8::text[], $9::text[], $10::text[], $11::bool[], $12::text[], $13::bool[], $14::text[], $15::text[],
	$16::int[], $17::timestamptz[], $18::timestamptz[], $19::bigint[], $20::text[])`

// upsertItemsSQL is insertItemsSQL replacing an existing row.
const upsertItemsSQL = insertItemsSQL + `
ON CONFLICT (run_id, item_id) DO UPDATE SET
	tenant_id = EXCLUDED.tenant_id, type = EXCLUDED.type, status = EXCLUDED.status,
	started_seq = EXCLUDED.started_seq, updated_seq = EXCLUDED.updated_seq, tool_name = EXCLUDED.tool_name,
	tool_call_id = EXCLUDED.tool_call_id, input = EXCLUDED.input, input_truncated = EXCLUDED.input_truncated,
	output = EXCLUDED.output, output_truncated = EXCLUDED.output_truncated, error_code = EXCLUDED.error_code,
	error_message = EXCLUDED.error_message, exit_code = EXCLUDED.exit_code, started_at = EXCLUDED.started_at,
	completed_at = EXCLUDED.completed_at, duration_ms = EXCLUDED.duration_ms,
	platform_session_id = EXCLUDED.platform_session_id`

// updateItemsSQL applies the changes of items that started before the
// batch; NULL means unchanged.
const updateItemsSQL = `UPDATE items AS i SET
	status = CASE WHEN u.st IS NOT NULL THEN u.st
		WHEN u.rs AND i.status = 'awaiting_approval' THEN 'started' ELSE i.status END,
	output = COALESCE(u.out, i.output),
	output_truncated = CASE WHEN u.out IS NULL THEN i.output_truncated ELSE u.otr END,
	error_code = COALESCE(u.ec, i.error_code),
	error_message = COALESCE(u.em, i.error_message),
	exit_code = COALESCE(u.ex, i.exit_code),
	completed_at = COALESCE(u.ca, i.completed_at),
	duration_ms = CASE WHEN u.ca IS NULL THEN i.duration_ms
		ELSE (extract(epoch FROM u.ca - i.started_at) * 1000)::bigint END,
	updated_seq = u.us
FROM unnest($1::text[], $2::text[], $3::text[], $4::bool[], $5::text[], $6::bool[], $7::text[], $8::text[],
	$9::int[], $10::timestamptz[], $11::bigint[]) AS u(r, it, st, rs, out, otr, ec, em, ex, ca, us)
WHERE i.run_id = u.r AND i.item_id = u.it`

// itemColumns holds one array per column of the items statements.
type itemColumns struct {
	runs, items, tenants, sessions, types, statuses, tools, calls, inputs, errCodes []string
	errMsgs                                                                         []string
	nullStatus, outputs, nullErrCodes, nullErrMsgs                                  []*string
	started, updated                                                                []int64
	inputCut, outputCut, resolve                                                    []bool
	exits                                                                           []*int32
	startedAt                                                                       []time.Time
	completedAt                                                                     []*time.Time
	durations                                                                       []*int64
}

func queueItems(b *pgx.Batch, p *batchPlan) {
	var ins, upd itemColumns
	for _, k := range p.itemOrder {
		c := p.items[k]
		if c.inserted {
			ins.addInsert(c)
		} else {
			upd.addUpdate(c)
		}
	}
	if len(ins.runs) > 0 {
		sql := insertItemsSQL
		if p.upsert {
			sql = upsertItemsSQL
		}
		b.Queue(sql, ins.runs, ins.items, ins.tenants, ins.types, ins.statuses, ins.started, ins.updated,
			ins.tools, ins.calls, ins.inputs, ins.inputCut, ins.outputs, ins.outputCut, ins.errCodes, ins.errMsgs,
			ins.exits, ins.startedAt, ins.completedAt, ins.durations, ins.sessions)
	}
	if len(upd.runs) > 0 {
		b.Queue(updateItemsSQL, upd.runs, upd.items, upd.nullStatus, upd.resolve, upd.outputs, upd.outputCut,
			upd.nullErrCodes, upd.nullErrMsgs, upd.exits, upd.completedAt, upd.updated)
	}
}

func (c *itemColumns) addInsert(x *itemChange) {
	c.runs, c.items = append(c.runs, x.key.runID), append(c.items, x.key.itemID)
	c.tenants, c.sessions = append(c.tenants, x.tenantID), append(c.sessions, x.sessionID)
	c.types = append(c.types, x.typ)
	c.statuses = append(c.statuses, deref(x.status))
	c.started, c.updated = append(c.started, x.startedSeq), append(c.updated, x.updatedSeq)
	c.tools, c.calls = append(c.tools, x.toolName), append(c.calls, x.toolCallID)
	c.inputs, c.inputCut = append(c.inputs, x.input), append(c.inputCut, x.inputTruncated)
	c.outputs, c.outputCut = append(c.outputs, x.output), append(c.outputCut, x.outputTruncated)
	c.errCodes, c.errMsgs = append(c.errCodes, deref(x.errorCode)), append(c.errMsgs, deref(x.errorMessage))
	c.exits = append(c.exits, x.exitCode)
	c.startedAt, c.completedAt = append(c.startedAt, ms(x.startedAt)), append(c.completedAt, msOrNil(x.completedAt))
	c.durations = append(c.durations, x.durationMs())
}

func (c *itemColumns) addUpdate(x *itemChange) {
	c.runs, c.items = append(c.runs, x.key.runID), append(c.items, x.key.itemID)
	c.nullStatus, c.resolve = append(c.nullStatus, x.status), append(c.resolve, x.resolve)
	c.outputs, c.outputCut = append(c.outputs, x.output), append(c.outputCut, x.outputTruncated)
	c.nullErrCodes, c.nullErrMsgs = append(c.nullErrCodes, x.errorCode), append(c.nullErrMsgs, x.errorMessage)
	c.exits, c.completedAt = append(c.exits, x.exitCode), append(c.completedAt, msOrNil(x.completedAt))
	c.updated = append(c.updated, x.updatedSeq)
}

// msOrNil converts optional Unix milliseconds to an optional time.
func msOrNil(v *int64) *time.Time {
	if v == nil {
		return nil
	}
	t := ms(*v)
	return &t
}
