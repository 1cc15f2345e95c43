package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// NotifyChannel is the Postgres notification channel on which ApplyBatch
// announces, at commit, the id of every command whose outcome it recorded.
const NotifyChannel = "xbot_command_outcome"

// write sends every statement of p in one pipeline (one round trip).
func write(ctx context.Context, tx pgx.Tx, projector, topic string, p *batchPlan) error {
	b := &pgx.Batch{}
	if len(p.events) > 0 {
		queueEvents(b, p)
		queueRunSeq(b, p)
		queueRunInserts(b, p)
		queueRunUpdates(b, p)
		queueCommands(b, p)
	}
	if len(p.notify) > 0 {
		b.Queue("SELECT pg_notify('"+NotifyChannel+"', id) FROM unnest($1::text[]) AS id", p.notify)
	}
	queueCheckpoints(b, projector, topic, p)
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("write batch: %w", err)
	}
	return nil
}

const insertEventsSQL = `INSERT INTO run_events (run_id, seq, event_id, type, tenant_id, platform_session_id,
	item_id, command_id, occurred_at, emitted_at, envelope)
SELECT r, s, ev, ty, te, ps, it, c, oc, em, j::json
FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
	$9::bigint[], $10::bigint[], $11::text[]) AS u(r, s, ev, ty, te, ps, it, c, oc, em, j)
ON CONFLICT (run_id, seq) DO NOTHING`

func queueEvents(b *pgx.Batch, p *batchPlan) {
	n := len(p.events)
	runs, seqs, ids, types := make([]string, n), make([]int64, n), make([]string, n), make([]string, n)
	tenants, sessions, items, cmds := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	occurred, emitted, envs := make([]int64, n), make([]int64, n), make([]string, n)
	for i, d := range p.events {
		e := d.env
		runs[i], seqs[i], ids[i], types[i] = clean(e.RunID), e.Seq, clean(e.EventID), clean(string(e.Type))
		tenants[i], sessions[i], items[i], cmds[i] = clean(e.TenantID), clean(e.PlatformSessionID), clean(e.ItemID), clean(e.CommandID)
		occurred[i], emitted[i], envs[i] = e.OccurredAt, e.EmittedAt, string(d.rec.Value)
	}
	b.Queue(insertEventsSQL, runs, seqs, ids, types, tenants, sessions, items, cmds, occurred, emitted, envs).
		Exec(func(ct pgconn.CommandTag) error {
			// The events were planned as new under the partition lock, so
			// each must insert; anything else means run_seq and run_events
			// disagree and the read models cannot be trusted.
			if ct.RowsAffected() != int64(n) {
				return fmt.Errorf("run_events out of step with run_seq: inserted %d of %d new events", ct.RowsAffected(), n)
			}
			return nil
		})
}

func queueRunSeq(b *pgx.Batch, p *batchPlan) {
	runs, seqs := make([]string, len(p.advanced)), make([]int64, len(p.advanced))
	for i, r := range p.advanced {
		runs[i], seqs[i] = clean(r), p.lastSeq[r]
	}
	b.Queue(`INSERT INTO run_seq (run_id, last_seq) SELECT * FROM unnest($1::text[], $2::bigint[])
ON CONFLICT (run_id) DO UPDATE SET last_seq = EXCLUDED.last_seq`, runs, seqs)
}

// ms converts Unix milliseconds, the protocol's times, to a time.
func ms(v int64) time.Time { return time.UnixMilli(v).UTC() }
