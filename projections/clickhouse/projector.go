package clickhouse

import (
	"context"
	"fmt"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/events"
	chinfra "github.com/xbot-runtime/xbot/infra/clickhouse"
	"github.com/xbot-runtime/xbot/projections/runner"
)

// ProjectorName is the name of the ClickHouse projector: its consumer group
// is "xbot-projector-clickhouse".
const ProjectorName = events.ViewClickHouse

// Projector writes the audit tables. It is safe for concurrent use, though
// the runner calls Apply from one goroutine at a time.
type Projector struct {
	conn *chinfra.Conn
	log  *zap.Logger
	seqs *seqCache
	// partitions is the events topic's partition count (WithPartitions).
	partitions int
}

// The Projector is the ClickHouse view of the runner.
var _ runner.Projector = (*Projector)(nil)

// New returns a Projector over conn, whose database must have Migrations
// applied. It panics on a nil dependency (a wiring bug).
func New(conn *chinfra.Conn, logger *zap.Logger, opts ...Option) *Projector {
	if conn == nil {
		panic("projections/clickhouse.New: conn is nil")
	}
	if logger == nil {
		panic("projections/clickhouse.New: logger is nil")
	}
	p := &Projector{conn: conn, log: logger, seqs: newSeqCache()}
	for _, o := range opts {
		o(p)
	}
	return p
}

// Name returns ProjectorName.
func (p *Projector) Name() string { return ProjectorName }

// Apply writes the batch as one insert into audit_events. Inside the server
// the insert goes on, through materialized views, to audit_commands (the
// command outcomes), audit_run_seqs (the runs' last seqs) and, last,
// audit_checkpoints (the partitions' next offsets). ClickHouse has no
// transactions: if the insert fails partway, what it wrote stays, the
// checkpoint has not moved, and the batch is applied again — the repeated
// rows are folded by ReplacingMergeTree. So each event takes effect at
// least once and is counted once by queries that read with FINAL.
//
// A record that can never be applied — not a valid envelope, a payload that
// does not decode, a time DateTime cannot hold, or a seq that is more than
// its run's last stored seq + 1 — fails the batch with a *runner.PoisonError
// naming that record before anything is written. Any other error is worth
// retrying; some rows may then be written twice, which changes nothing.
func (p *Projector) Apply(ctx context.Context, recs []runner.Record) error {
	if len(recs) == 0 {
		return nil
	}
	if !decoded(recs) {
		recs = append([]runner.Record(nil), recs...) // rows fills in Event; the caller's slice stays as it was
	}
	rows, err := p.rows(recs)
	if err != nil {
		return err
	}
	last, err := p.seqs.check(ctx, p.conn, recs)
	if err != nil {
		return err
	}
	if rows, err = p.firstWriterWins(ctx, recs, rows, last); err != nil {
		return err
	}
	if len(rows) == 0 {
		return nil
	}
	if err := p.conn.Insert(ctx, "audit_events", columns(eventColumns, rows)...); err != nil {
		return fmt.Errorf("projector %s: %w", ProjectorName, err)
	}
	p.seqs.applied(recs)
	return nil
}

// rows maps recs to rows, or returns the PoisonError of the first record
// that cannot be mapped.
func (p *Projector) rows(recs []runner.Record) ([]eventRow, error) {
	out := make([]eventRow, 0, len(recs))
	for i := range recs {
		rec := &recs[i]
		if rec.Event.RunID == "" { // not decoded by the caller
			env, err := events.Decode(rec.Value)
			if err != nil {
				return nil, runner.Poison(*rec, err.Error())
			}
			rec.Event = env
		}
		row, err := rowOf(rec.Event, rec.Partition, rec.Offset)
		if err != nil {
			p.log.Warn("poison record", zap.String("run_id", rec.Event.RunID), zap.Int64("seq", rec.Event.Seq),
				zap.Int32("partition", rec.Partition), zap.Int64("offset", rec.Offset), zap.Error(err))
			return nil, runner.Poison(*rec, err.Error())
		}
		out = append(out, row)
	}
	return out, nil
}

// decoded reports whether every record of recs carries its envelope, as the
// runner's do: then the envelopes it decoded are used as they are.
func decoded(recs []runner.Record) bool {
	for i := range recs {
		if recs[i].Event.RunID == "" {
			return false
		}
	}
	return true
}

// Checkpoints returns the next offset per partition stored with the events
// (an empty map, never nil, when none is stored: the view keeps its own
// position, so a partition it never saw starts at the beginning).
func (p *Projector) Checkpoints(ctx context.Context) (map[int32]int64, error) {
	ctx, cancel := p.conn.WithTimeout(ctx)
	defer cancel()
	rows, err := p.conn.Query(ctx,
		"SELECT kafka_partition, max(next_offset) FROM audit_checkpoints GROUP BY kafka_partition")
	if err != nil {
		return nil, fmt.Errorf("projector %s: read checkpoints: %w", ProjectorName, err)
	}
	defer func() { _ = rows.Close() }()
	out := map[int32]int64{}
	for rows.Next() {
		var part int32
		var next int64
		if err := rows.Scan(&part, &next); err != nil {
			return nil, fmt.Errorf("projector %s: read checkpoints: %w", ProjectorName, err)
		}
		out[part] = next
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("projector %s: read checkpoints: %w", ProjectorName, err)
	}
	return out, nil
}

// resetTables are emptied by Reset, checkpoints first: a Reset interrupted
// halfway then leaves data without a position, which a replay from the
// beginning folds in, never a position without its data.
var resetTables = []string{"audit_checkpoints", "audit_run_seqs", "audit_commands", "audit_events"}

// Reset empties the audit tables and the checkpoints, so the next Apply
// rebuilds the view from the beginning of the log. Stop every instance of the
// projector first: ClickHouse cannot empty the tables atomically, and an
// instance that keeps applying would leave rows from its position on.
func (p *Projector) Reset(ctx context.Context) error {
	for _, t := range resetTables {
		if err := p.conn.Exec(ctx, "TRUNCATE TABLE "+t); err != nil {
			return fmt.Errorf("reset projector %s: truncate %s: %w", ProjectorName, t, err)
		}
	}
	p.seqs.reset()
	return nil
}
