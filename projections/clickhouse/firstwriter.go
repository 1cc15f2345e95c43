package clickhouse

import (
	"context"
	"fmt"
	"slices"

	"go.uber.org/zap"

	chinfra "github.com/xbot-runtime/xbot/infra/clickhouse"
	"github.com/xbot-runtime/xbot/infra/kafka/partition"
	"github.com/xbot-runtime/xbot/projections/runner"
)

// Option adjusts a Projector.
type Option func(*Projector)

// WithPartitions tells the projector the events topic's partition count, so
// it refuses an event that is not on its run's partition
// (partition.For): only that partition's owner may write the run, so
// such an event was forged. 0 (the default) checks nothing.
func WithPartitions(n int) Option { return func(p *Projector) { p.partitions = n } }

// storedEvent is what identifies the content of a stored (run, seq).
type storedEvent struct{ eventID, typ, payload string }

type runSeq struct {
	run string
	seq uint64
}

// firstWriterWins drops from rows every event a second writer produced: one
// off its run's partition, one whose (run, seq) is already stored (or earlier
// in the batch) with other content. The stored row stands, so the audit can
// never be overwritten through the log; a re-delivery of the same record has
// the same content and is written again (ReplacingMergeTree folds it). The
// dropped records are logged, never applied.
func (p *Projector) firstWriterWins(ctx context.Context, recs []runner.Record, rows []eventRow, last map[string]int64) ([]eventRow, error) {
	stored, err := p.storedFor(ctx, recs, last)
	if err != nil {
		return nil, err
	}
	kept := rows[:0:0]
	for i, r := range rows {
		k := runSeq{r.RunID, r.Seq}
		mine := storedEvent{r.EventID, r.Type, r.Payload}
		reason := ""
		switch prior, ok := stored[k]; {
		case p.partitions > 0 && partition.For(r.RunID, p.partitions) != r.Partition:
			reason = fmt.Sprintf("not on the run's partition %d", partition.For(r.RunID, p.partitions))
		case ok && !slices.Contains(prior, mine):
			reason = "seq already stored with other content"
		default:
			stored[k] = append(prior, mine)
			kept = append(kept, r)
			continue
		}
		p.log.Warn("event refused: a second writer of a stored seq", zap.String("reason", reason),
			zap.String("run_id", r.RunID), zap.Uint64("seq", r.Seq), zap.Int32("partition", recs[i].Partition),
			zap.Int64("offset", recs[i].Offset))
	}
	return kept, nil
}

// storedFor reads the stored content of the (run, seq) of recs that are at or
// below their run's last stored seq (re-deliveries, or forgeries of them).
func (p *Projector) storedFor(ctx context.Context, recs []runner.Record, last map[string]int64) (map[runSeq][]storedEvent, error) {
	out := map[runSeq][]storedEvent{}
	var runs []string
	want := map[runSeq]bool{}
	for _, r := range recs {
		if l, ok := last[r.Event.RunID]; ok && r.Event.Seq <= l {
			want[runSeq{r.Event.RunID, uint64(r.Event.Seq)}] = true
			if !slices.Contains(runs, r.Event.RunID) {
				runs = append(runs, r.Event.RunID)
			}
		}
	}
	if len(runs) == 0 {
		return out, nil
	}
	ctx, cancel := p.conn.WithTimeout(ctx)
	defer cancel()
	lo, hi := seqRange(want)
	rows, err := p.conn.Query(ctx, "SELECT run_id, seq, event_id, type, payload FROM audit_events "+
		"WHERE run_id IN ? AND seq >= ? AND seq <= ?", chinfra.Set(runs), lo, hi)
	if err != nil {
		return nil, fmt.Errorf("projector %s: read stored events: %w", ProjectorName, err)
	}
	defer func() { _ = rows.Close() }()
	for rows.Next() {
		var k runSeq
		var e storedEvent
		if err := rows.Scan(&k.run, &k.seq, &e.eventID, &e.typ, &e.payload); err != nil {
			return nil, fmt.Errorf("projector %s: read stored events: %w", ProjectorName, err)
		}
		if want[k] {
			out[k] = append(out[k], e)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("projector %s: read stored events: %w", ProjectorName, err)
	}
	return out, nil
}

// seqRange returns the smallest and largest seq of keys.
func seqRange(keys map[runSeq]bool) (lo, hi uint64) {
	first := true
	for k := range keys {
		if first || k.seq < lo {
			lo = k.seq
		}
		if first || k.seq > hi {
			hi = k.seq
		}
		first = false
	}
	return lo, hi
}
