package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// NotifyChannel is the Postgres notification channel on which ApplyBatch
// announces, at commit, the id of every command whose outcome it recorded.
const NotifyChannel = "xbot_command_outcome"

// write sends every statement of p but the copy of its events
// (copyEvents, before) in one pipeline (one round trip).
func write(ctx context.Context, tx pgx.Tx, projector, topic string, p *batchPlan) error {
	b := &pgx.Batch{}
	if len(p.events) > 0 {
		queueRunSeq(b, p)
		queueRunInserts(b, p)
		queueRunUpdates(b, p)
		queueCommands(b, p)
		queueItems(b, p)
		queueApprovals(b, p)
		queueAsks(b, p)
		queueGrants(b, p)
		queueRevocations(b, p)
		queueSessions(b, p)
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

// ms converts Unix milliseconds, the protocol's times, to a time.
func ms(v int64) time.Time { return time.UnixMilli(v).UTC() }
