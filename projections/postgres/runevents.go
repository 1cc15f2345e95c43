package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// eventColumns are the run_events columns written by copyEvents, in order.
var eventColumns = []string{"run_id", "seq", "event_id", "type", "tenant_id", "platform_session_id", "item_id",
	"command_id", "occurred_at", "emitted_at", "envelope"}

// copyEvents inserts the batch's new events with COPY, measured ~1.3x
// faster per event than a set-based INSERT at 1000 events (see
// BenchmarkApplyBatch). COPY has no ON CONFLICT; none is needed, since the
// events were planned as new under the partition lock. A duplicate key
// therefore means run_seq and run_events disagree: the batch fails rather
// than projecting on a view that cannot be trusted.
func copyEvents(ctx context.Context, tx pgx.Tx, p *batchPlan) error {
	if len(p.events) == 0 {
		return nil
	}
	n, err := tx.CopyFrom(ctx, pgx.Identifier{"run_events"}, eventColumns,
		pgx.CopyFromSlice(len(p.events), func(i int) ([]any, error) {
			e := p.events[i].env
			return []any{e.RunID, e.Seq, e.EventID, string(e.Type), e.TenantID, e.PlatformSessionID, e.ItemID,
				e.CommandID, e.OccurredAt, e.EmittedAt, string(p.events[i].rec.Value)}, nil
		}))
	if err != nil {
		return fmt.Errorf("copy %d events: %w", len(p.events), err)
	}
	if n != int64(len(p.events)) {
		return fmt.Errorf("copy events: wrote %d of %d", n, len(p.events))
	}
	return nil
}

func queueRunSeq(b *pgx.Batch, p *batchPlan) {
	runs, seqs := make([]string, len(p.advanced)), make([]int64, len(p.advanced))
	for i, r := range p.advanced {
		runs[i], seqs[i] = r, p.lastSeq[r]
	}
	b.Queue(`INSERT INTO run_seq (run_id, last_seq) SELECT * FROM unnest($1::text[], $2::bigint[])
ON CONFLICT (run_id) DO UPDATE SET last_seq = EXCLUDED.last_seq`, runs, seqs)
}
