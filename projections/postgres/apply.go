package postgres

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/kafka"
)

// ApplyBatch projects recs, records of topic read by projector, in one
// transaction per group of partitions (one group unless recs are many;
// applyDecoded): each new event is stored in run_events and applied to the
// runs, commands, items, approvals, permission_grants and sessions read
// models, events already applied are skipped, and the checkpoint of every
// partition in recs advances to its highest offset + 1 (never backwards).
// Watchers of the outcomes written are notified when the transaction
// commits.
//
// Records of one run must come in log order. A record that cannot be
// projected fails the batch with a *RecordError naming it: one that is not
// a valid envelope, has a payload the read models need that does not
// decode, or whose seq is not its run's last applied seq + 1 (then the
// RecordError wraps an *events.SeqGapError). In these cases, and on any database
// error, nothing of the failed transaction is written (the partitions of
// another may have committed), and the batch can be retried whole: what
// committed is skipped as applied.
func (s *Projector) ApplyBatch(ctx context.Context, projector, topic string, recs []Record) error {
	if len(recs) == 0 {
		return nil
	}
	batch, err := decodeAll(recs)
	if err == nil {
		err = s.applyDecoded(ctx, projector, topic, batch)
	}
	return s.reported(err, projector, topic, len(recs))
}

// reported logs a seq gap and says which batch err is of.
func (s *Projector) reported(err error, projector, topic string, n int) error {
	var gap *events.SeqGapError
	if errors.As(err, &gap) {
		s.log.Warn("seq gap; batch not applied", zap.String("run_id", gap.RunID),
			zap.Int64("seq", gap.Actual), zap.Int64("expected_seq", gap.Expected))
	}
	if err != nil {
		return fmt.Errorf("apply %d records of %s for projector %s: %w", n, topic, projector, err)
	}
	return nil
}

// applyDecoded writes batch, decoded records, then, when it is time to
// check (analyzer), starts analyzing the tables that grew, beside the
// batches that follow (analyzeGrownBeside). A large batch of several
// partitions is written by s.writers transactions at once, each with whole
// partitions (writeGroups); a smaller one in one transaction.
func (s *Projector) applyDecoded(ctx context.Context, projector, topic string, batch []decoded) error {
	if err := s.writeGroups(ctx, projector, topic, partitionGroups(batch, s.writers, s.splitAt)); err != nil {
		return err
	}
	s.analyzeGrownBeside(ctx, len(batch))
	return nil
}

// Concurrent writers. A batch's partitions are independent in the view:
// a run, its events, items, commands and approvals live on one partition,
// each partition has its own checkpoint and advisory lock, and the rows
// that several partitions write (sessions) are taken under session locks
// in key order (queueSessions). Two transactions with disjoint partitions
// are what two instances of the projector already do. With one transaction
// per batch the server works on one backend while the batch's rows are
// copied and updated; two use a second core of the server (measured in
// docs/performance.md). A batch below splitAt records is not split: it
// would only add a commit.
const (
	maxWriters     = 2
	defaultSplitAt = 1024
)

// writersFor is how many transactions write a batch at once on pool: at
// most maxWriters, and at most half the pool, so that the API's reads
// sharing it are never left without a connection by the projector alone.
func writersFor(pool *pgxpool.Pool) int {
	return max(1, min(maxWriters, int(pool.Config().MaxConns)/2))
}

// writeGroups writes each group in a transaction of its own, all at once.
// Each group commits or fails on its own: on error the batch is retried
// whole, and the groups that committed are skipped as applied.
func (s *Projector) writeGroups(ctx context.Context, projector, topic string, groups [][]decoded) error {
	if len(groups) == 1 {
		return s.writeDecoded(ctx, projector, topic, groups[0])
	}
	errs := make([]error, len(groups))
	var wg sync.WaitGroup
	for i, g := range groups {
		wg.Go(func() { errs[i] = s.writeDecoded(ctx, projector, topic, g) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// partitionGroups splits batch into at most n groups of whole partitions,
// of about equal records (the largest partition first, each into the
// smallest group), each in batch's order; batch whole when it has fewer
// than splitAt records or one partition.
func partitionGroups(batch []decoded, n, splitAt int) [][]decoded {
	if n < 2 || len(batch) < splitAt {
		return [][]decoded{batch}
	}
	byPart := map[int32][]decoded{}
	var parts []int32
	for _, d := range batch {
		if _, ok := byPart[d.rec.Partition]; !ok {
			parts = append(parts, d.rec.Partition)
		}
		byPart[d.rec.Partition] = append(byPart[d.rec.Partition], d)
	}
	if len(parts) < 2 {
		return [][]decoded{batch}
	}
	slices.SortStableFunc(parts, func(a, b int32) int { return len(byPart[b]) - len(byPart[a]) })
	groups := make([][]decoded, min(n, len(parts)))
	for _, part := range parts {
		smallest := 0
		for i := range groups {
			if len(groups[i]) < len(groups[smallest]) {
				smallest = i
			}
		}
		groups[smallest] = append(groups[smallest], byPart[part]...)
	}
	return groups
}

// uniqueViolation is the SQLSTATE of a duplicate key.
const uniqueViolation = "23505"

// writeDecoded writes batch, decoded records, in one transaction. Its runs
// and items rows are inserted plainly; when one exists already (a log that
// accepts a run or starts an item twice) the transaction is rolled back and
// the batch written again with upserts, which replace such rows.
func (s *Projector) writeDecoded(ctx context.Context, projector, topic string, batch []decoded) error {
	err := s.writeOnce(ctx, projector, topic, batch, false)
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == uniqueViolation &&
		(pe.ConstraintName == "runs_pkey" || pe.ConstraintName == "items_pkey") {
		s.log.Warn("a run or item the batch starts exists already; writing the batch again, replacing it",
			zap.String("constraint", pe.ConstraintName))
		err = s.writeOnce(ctx, projector, topic, batch, true)
	}
	return err
}

// writeOnce writes batch in one transaction, upserting runs and items rows
// when upsert.
func (s *Projector) writeOnce(ctx context.Context, projector, topic string, batch []decoded, upsert bool) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		last, err := lockAndLoad(ctx, tx, projector, topic, batch)
		if err != nil {
			return err
		}
		p, err := selectNew(batch, last)
		if err != nil {
			return err
		}
		p.upsert = upsert
		// The read models are planned while the new events are copied: the
		// copy waits mostly on the server, the planning is this process's
		// own work.
		planned := make(chan error, 1)
		go func() { planned <- p.planModels() }()
		copied := copyEvents(ctx, tx, p)
		if err := <-planned; err != nil {
			return err
		}
		if copied != nil {
			return copied
		}
		return write(ctx, tx, projector, topic, p)
	})
}

// lockAndLoad takes the advisory lock of every partition in batch (in order,
// so that two instances cannot deadlock) and returns the last applied seq of
// the runs, in one round trip.
func lockAndLoad(ctx context.Context, tx pgx.Tx, projector, topic string, batch []decoded) (map[string]int64, error) {
	b := &pgx.Batch{}
	for _, key := range lockKeys(projector, topic, batch) {
		b.Queue("SELECT pg_advisory_xact_lock($1)", key)
	}
	runs := runsOf(batch)
	last := make(map[string]int64, len(runs))
	b.Queue("SELECT run_id, last_seq FROM run_seq WHERE run_id = ANY($1)", runs).Query(func(rows pgx.Rows) error {
		var run string
		var seq int64
		_, err := pgx.ForEachRow(rows, []any{&run, &seq}, func() error {
			last[run] = seq
			return nil
		})
		return err
	})
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return nil, fmt.Errorf("lock partitions and read run seqs: %w", err)
	}
	return last, nil
}

// lockKeys returns the sorted advisory lock keys of the partitions in batch.
func lockKeys(projector, topic string, batch []decoded) []int64 {
	var parts []int32
	for _, d := range batch {
		if !slices.Contains(parts, d.rec.Partition) {
			parts = append(parts, d.rec.Partition)
		}
	}
	keys := make([]int64, len(parts))
	for i, part := range parts {
		h := fnv.New64a()
		_, _ = h.Write([]byte("projections/postgres\x00" + projector + "\x00" + topic + "\x00" + strconv.Itoa(int(part))))
		keys[i] = int64(h.Sum64()) //nolint:gosec // wrap-around is intended: any 64-bit key works
	}
	slices.Sort(keys)
	return keys
}

// RecordError reports a record that cannot be projected (not a valid event
// envelope, a payload the read model needs that does not decode, or a seq
// gap, wrapping an *events.SeqGapError). Nothing of the batch was written; the caller
// decides whether to dead-letter it.
type RecordError struct {
	Partition int32
	Offset    int64
	Err       error
}

func (e *RecordError) Error() string {
	return fmt.Sprintf("record partition %d offset %d: %v", e.Partition, e.Offset, e.Err)
}

func (e *RecordError) Unwrap() error { return e.Err }

// Record is one Kafka record of the events topic: Value is the event envelope
// JSON exactly as it was produced.
type Record = kafka.Record
