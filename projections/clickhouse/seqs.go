package clickhouse

import (
	"context"
	"fmt"
	"sync"

	chinfra "github.com/xbot-runtime/xbot/infra/clickhouse"
	"github.com/xbot-runtime/xbot/projections/runner"
)

// maxCachedRuns bounds the seq cache: ~100 bytes a run, so ~10 MB. When it
// is full it is emptied, and runs are looked up again as needed.
const maxCachedRuns = 100_000

// seqCache remembers the last seq stored per run, so the gap check needs the
// database only for runs it has not seen (after a start, or when a run's
// next seq is not what it remembers: another instance may have written it).
type seqCache struct {
	mu   sync.Mutex
	last map[string]int64
}

func newSeqCache() *seqCache { return &seqCache{last: map[string]int64{}} }

// check returns a *runner.PoisonError for the first record of recs whose seq
// is more than one past its run's last stored seq (or its predecessor in
// recs). Seqs at or below it are re-deliveries and pass. It returns the last
// stored seq of each run of recs as far as it knows (from the cache, else
// the database).
func (c *seqCache) check(ctx context.Context, conn *chinfra.Conn, recs []runner.Record) (map[string]int64, error) {
	known := c.snapshot(recs)
	if rec := firstGap(recs, known); rec != nil {
		fresh, err := lastSeqs(ctx, conn, runsOf(recs))
		if err != nil {
			return nil, err
		}
		if rec = firstGap(recs, fresh); rec != nil {
			return nil, runner.Poison(*rec, fmt.Sprintf("seq gap: run %s has seq %d stored, got seq %d",
				rec.Event.RunID, lastBefore(recs, fresh, rec), rec.Event.Seq))
		}
		return fresh, nil
	}
	return known, nil
}

// snapshot returns the cached last seq of the runs of recs; a run missing
// from the cache gets -1, which firstGap treats as "look it up".
func (c *seqCache) snapshot(recs []runner.Record) map[string]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int64, len(recs))
	for _, r := range recs {
		last, ok := c.last[r.Event.RunID]
		if !ok {
			last = -1
		}
		out[r.Event.RunID] = last
	}
	return out
}

// firstGap returns the first record of recs whose seq is more than one past
// the last seq of its run (from last, then the records before it), or whose
// run's last seq is unknown (-1).
func firstGap(recs []runner.Record, last map[string]int64) *runner.Record {
	seen := make(map[string]int64, len(last))
	for i := range recs {
		r := &recs[i]
		prev, ok := seen[r.Event.RunID]
		if !ok {
			prev = last[r.Event.RunID]
		}
		if prev < 0 || r.Event.Seq > prev+1 {
			return r
		}
		seen[r.Event.RunID] = max(prev, r.Event.Seq)
	}
	return nil
}

// lastBefore is the seq the run of rec had reached before rec, for messages.
func lastBefore(recs []runner.Record, last map[string]int64, rec *runner.Record) int64 {
	prev := last[rec.Event.RunID]
	for i := range recs {
		if &recs[i] == rec {
			break
		}
		if recs[i].Event.RunID == rec.Event.RunID {
			prev = max(prev, recs[i].Event.Seq)
		}
	}
	return prev
}

// applied records the seqs of recs as stored.
func (c *seqCache) applied(recs []runner.Record) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.last)+len(recs) > maxCachedRuns {
		c.last = map[string]int64{}
	}
	for _, r := range recs {
		c.last[r.Event.RunID] = max(c.last[r.Event.RunID], r.Event.Seq)
	}
}

func (c *seqCache) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.last = map[string]int64{}
}

func runsOf(recs []runner.Record) []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range recs {
		if !seen[r.Event.RunID] {
			seen[r.Event.RunID] = true
			out = append(out, r.Event.RunID)
		}
	}
	return out
}

// lastSeqs reads the last stored seq of runs (0 for a run with none).
func lastSeqs(ctx context.Context, conn *chinfra.Conn, runs []string) (map[string]int64, error) {
	out := make(map[string]int64, len(runs))
	for _, r := range runs {
		out[r] = 0
	}
	ctx, cancel := conn.WithTimeout(ctx)
	defer cancel()
	rows, err := conn.Query(ctx,
		"SELECT run_id, max(last_seq) FROM audit_run_seqs WHERE run_id IN ? GROUP BY run_id", chinfra.Set(runs))
	if err != nil {
		return nil, fmt.Errorf("projector %s: read last seqs: %w", ProjectorName, err)
	}
	defer func() { _ = rows.Close() }()
	for rows.Next() {
		var run string
		var last uint64
		if err := rows.Scan(&run, &last); err != nil {
			return nil, fmt.Errorf("projector %s: read last seqs: %w", ProjectorName, err)
		}
		out[run] = int64(last)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("projector %s: read last seqs: %w", ProjectorName, err)
	}
	return out, nil
}
