package baseline

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// CopyBatch is the rows per CopyFrom and per ClickHouse insert: the largest
// batch of the projectors' own benchmarks, about one poll of a busy partition.
const CopyBatch = 1000

// pgColumns are run_events' columns; the baseline table has them without
// the primary key.
var pgColumns = []string{"run_id", "seq", "event_id", "type", "tenant_id", "platform_session_id", "item_id",
	"command_id", "occurred_at", "emitted_at", "envelope"}

// Postgres copies the events as run_events rows with pgx CopyFrom, CopyBatch
// rows at a time, into table (created without keys or indexes, dropped at
// the end): the floor of what the Postgres projector's inserts can cost.
func Postgres(ctx context.Context, pool *pgxpool.Pool, table string, evs []Event) (Result, error) {
	if _, err := pool.Exec(ctx, `CREATE TABLE `+pgx.Identifier{table}.Sanitize()+` (run_id text, seq bigint,
	event_id text, type text, tenant_id text, platform_session_id text, item_id text, command_id text,
	occurred_at bigint, emitted_at bigint, envelope json)`); err != nil {
		return Result{}, fmt.Errorf("postgres baseline: create %s: %w", table, err)
	}
	defer func() { _, _ = pool.Exec(context.WithoutCancel(ctx), `DROP TABLE `+pgx.Identifier{table}.Sanitize()) }()
	start := time.Now()
	for _, batch := range batches(evs, CopyBatch) {
		rows := make([][]any, len(batch))
		for i, e := range batch {
			rows[i] = []any{e.RunID, e.Seq, e.EventID, string(e.Type), e.TenantID, e.PlatformSessionID,
				e.ItemID, e.CommandID, e.OccurredAt, e.EmittedAt, string(e.Raw)}
		}
		n, err := pool.CopyFrom(ctx, pgx.Identifier{table}, pgColumns, pgx.CopyFromRows(rows))
		if err != nil {
			return Result{}, fmt.Errorf("postgres baseline: copy: %w", err)
		}
		if n != int64(len(rows)) {
			return Result{}, fmt.Errorf("postgres baseline: copied %d of %d rows", n, len(rows))
		}
	}
	return result(len(evs), time.Since(start)), nil
}
