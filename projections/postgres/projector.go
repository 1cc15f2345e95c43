package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/projections/runner"
)

// ProjectorName is the name of the Postgres projector (runner.Projector):
// its consumer group is "xbot-projector-postgres" and its checkpoints are
// stored under this name.
const ProjectorName = events.ViewPostgres

// Option configures a Store.
type Option func(*Store)

// WithEventsTopic names the events topic whose positions the Store keeps as
// a runner.Projector. Default: kafka.Config{}.EventsTopic() (no prefix).
func WithEventsTopic(topic string) Option {
	return func(s *Store) { s.topic = topic }
}

// The Store, through its Projector, is the Postgres view of the runner.
var (
	_ runner.Projector = (*Store)(nil)
	_ runner.Projector = (*Projector)(nil)
)

// Name returns ProjectorName.
func (s *Projector) Name() string { return ProjectorName }

// Apply projects batch as ApplyBatch does, as projector ProjectorName on the
// Store's events topic: all or nothing per partition, idempotently,
// together with the checkpoints of the batch's partitions. It uses the envelopes the runner
// decoded instead of decoding the records again.
//
// A record that can never be applied — not a valid envelope, a payload the
// read models need that does not decode, or a seq that is not its run's
// last applied seq + 1 — fails the batch with a *runner.PoisonError naming
// that record; nothing of its partition's transaction is written. Any
// other error (the database) is worth retrying.
func (s *Projector) Apply(ctx context.Context, batch []runner.Record) error {
	if len(batch) == 0 {
		return nil
	}
	decodedBatch, err := decodedRecords(batch)
	if err == nil {
		err = s.applyDecoded(ctx, ProjectorName, s.topic, decodedBatch)
	}
	err = s.reported(err, ProjectorName, s.topic, len(batch))
	var re *RecordError
	if !errors.As(err, &re) {
		return err
	}
	for _, r := range batch {
		if r.Partition == re.Partition && r.Offset == re.Offset {
			return runner.Poison(r, re.Err.Error())
		}
	}
	return err // impossible: the error names a record of the batch
}

// decodedRecords takes the envelopes the runner decoded (decoding only a
// record it did not).
func decodedRecords(batch []runner.Record) ([]decoded, error) {
	out := make([]decoded, len(batch))
	for i, r := range batch {
		env := r.Event
		if env.RunID == "" {
			var err error
			if env, err = events.Decode(r.Value); err != nil {
				return nil, &RecordError{Partition: r.Partition, Offset: r.Offset, Err: err}
			}
		}
		var err error
		if out[i], err = decodedOf(r.Record, env); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Checkpoints returns the next offset per partition of the Store's events
// topic that Apply committed (none for a partition never applied).
func (s *Projector) Checkpoints(ctx context.Context) (map[int32]int64, error) {
	return s.CheckpointsOf(ctx, ProjectorName, s.topic)
}

// readModelTables are the tables Reset empties and Checksums digests, with
// their keys; text keys sort byte-wise (COLLATE "C") so that a digest does
// not depend on the database's locale.
var readModelTables = []struct{ name, orderBy string }{
	{"runs", `run_id COLLATE "C"`},
	{"run_events", `run_id COLLATE "C", seq`},
	{"run_seq", `run_id COLLATE "C"`},
	{"commands", `command_id COLLATE "C"`},
	{"items", `run_id COLLATE "C", item_id COLLATE "C"`},
	{"approvals", `run_id COLLATE "C", item_id COLLATE "C"`},
	{"sessions", `tenant_id COLLATE "C", platform_session_id COLLATE "C"`},
	{"permission_grants", `run_id COLLATE "C", seq`},
}

// Reset empties every read model and deletes the checkpoints of
// ProjectorName (on every topic), in one transaction, so that the next
// Apply rebuilds the view from the beginning of the log. Heartbeats, the
// checkpoints of other projectors and schema_migrations are kept.
//
// Stop every instance of the projector first: an instance that keeps
// applying from its own position after Reset finds its runs' earlier seqs
// missing and reports their records as poison.
func (s *Projector) Reset(ctx context.Context) error {
	tables := ""
	for i, t := range readModelTables {
		if i > 0 {
			tables += ", "
		}
		tables += t.name
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "TRUNCATE "+tables); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, "DELETE FROM projector_checkpoints WHERE projector = $1", ProjectorName)
		return err
	})
	if err != nil {
		return fmt.Errorf("reset projector %s: %w", ProjectorName, err)
	}
	return nil
}

// defaultTopic is the events topic without a prefix.
func defaultTopic() string { return kafka.Config{}.EventsTopic() }
