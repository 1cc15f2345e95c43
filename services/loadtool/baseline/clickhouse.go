package baseline

import (
	"context"
	"fmt"
	"time"

	chinfra "github.com/xbot-runtime/xbot/infra/clickhouse"
)

// ClickHouse inserts the events with clickhouse-go's
// PrepareBatch/Append/Send, CopyBatch rows per batch, into table: a plain
// MergeTree with the audit log's core columns and no materialized views
// (created, then dropped at the end). No decoding or seq check is timed.
func ClickHouse(ctx context.Context, conn *chinfra.Conn, table string, evs []Event) (Result, error) {
	if err := conn.Exec(ctx, `CREATE TABLE `+table+` (run_id String, seq UInt64, event_id String, type String,
	tenant_id String, item_id String, command_id String, occurred_at Int64, envelope String)
	ENGINE = MergeTree ORDER BY (tenant_id, run_id, seq)`); err != nil {
		return Result{}, fmt.Errorf("clickhouse baseline: create %s: %w", table, err)
	}
	defer func() { _ = conn.Exec(context.WithoutCancel(ctx), `DROP TABLE `+table) }()
	start := time.Now()
	for _, batch := range batches(evs, CopyBatch) {
		if err := chInsert(ctx, conn, table, batch); err != nil {
			return Result{}, fmt.Errorf("clickhouse baseline: %w", err)
		}
	}
	return result(len(evs), time.Since(start)), nil
}

func chInsert(ctx context.Context, conn *chinfra.Conn, table string, batch []Event) error {
	b, err := conn.PrepareBatch(ctx, "INSERT INTO "+table)
	if err != nil {
		return err
	}
	for _, e := range batch {
		if err := b.Append(e.RunID, uint64(e.Seq), e.EventID, string(e.Type), e.TenantID, e.ItemID, e.CommandID,
			e.OccurredAt, string(e.Raw)); err != nil {
			_ = b.Abort() // the append error is what matters
			return err
		}
	}
	return b.Send()
}
