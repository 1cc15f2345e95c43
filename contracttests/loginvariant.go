package contracttests

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/kafka"
)

// Source returns every committed event, in append order per run.
type Source func(ctx context.Context) ([]events.Envelope, error)

// KafkaSource reads the events topic with read_committed. It also checks
// that every event is keyed by its runId and lies on the partition
// partition.For(runId) names, the only one whose owner may write the
// run (see Routed).
func KafkaSource(cfg kafka.Config) Source {
	return func(ctx context.Context) ([]events.Envelope, error) {
		n, err := eventPartitions(ctx, cfg)
		if err != nil {
			return nil, err
		}
		var out []events.Envelope
		var misplaced []error
		err = kafka.ReadTopic(ctx, cfg, cfg.EventsTopic(), func(r kafka.Record) error {
			e, err := events.Decode(r.Value)
			if err != nil {
				return fmt.Errorf("partition %d offset %d: %w", r.Partition, r.Offset, err)
			}
			if err := Routed(r, e.RunID, n); err != nil {
				misplaced = append(misplaced, err)
			}
			out = append(out, e)
			return nil
		})
		return out, errors.Join(err, errors.Join(misplaced...))
	}
}

// PostgresSource reads the run_events table of the Postgres read model.
func PostgresSource(pool *pgxpool.Pool) Source {
	return func(ctx context.Context) ([]events.Envelope, error) {
		rows, err := pool.Query(ctx, `SELECT envelope FROM run_events ORDER BY run_id, seq`)
		if err != nil {
			return nil, fmt.Errorf("read run_events: %w", err)
		}
		defer rows.Close()
		var out []events.Envelope
		for rows.Next() {
			var raw []byte
			if err := rows.Scan(&raw); err != nil {
				return nil, err
			}
			e, err := events.Decode(raw)
			if err != nil {
				return nil, err
			}
			out = append(out, e)
		}
		return out, rows.Err()
	}
}

// afterTerminal lists what may follow a terminal event: outcomes of commands
// that did not change the run — refused, repeated or without effect, and a
// follow-up, which is applied by creating the session's next run — and the
// revocation of a grant the run holds, which a later follow-up would
// otherwise inherit (docs/governance.md).
var afterTerminal = map[events.Type]bool{
	events.CommandRejected: true, events.CommandNoEffect: true, events.CommandDuplicate: true,
	events.CommandApplied: true, events.PermissionGrantRevoked: true,
}

// CheckLog checks the log invariant on evs and returns every violation:
// per run, seq runs 1, 2, 3, … with no gap or duplicate in append order,
// folding from the empty state never fails, and nothing that changes the run
// follows a terminal event. It returns the folded state of every run.
func CheckLog(evs []events.Envelope) (map[string]events.RunState, error) {
	states := map[string]events.RunState{}
	broken := map[string]bool{}
	var errs []error
	for _, e := range evs {
		if broken[e.RunID] {
			continue
		}
		st := states[e.RunID]
		if st.CurrentStatus().Terminal() && !afterTerminal[e.Type] {
			errs = append(errs, fmt.Errorf("run %s seq %d: %s after terminal state %s", e.RunID, e.Seq, e.Type, st.Status))
			broken[e.RunID] = true
			continue
		}
		next, err := events.Fold(st, e)
		if err != nil {
			var gap *events.SeqGapError
			var ill *events.IllegalTransitionError
			if !errors.As(err, &gap) && !errors.As(err, &ill) {
				err = fmt.Errorf("run %s seq %d: %w", e.RunID, e.Seq, err)
			}
			errs = append(errs, err)
			broken[e.RunID] = true
			continue
		}
		states[e.RunID] = next
	}
	return states, errors.Join(errs...)
}

// LogInvariant reads src and fails t on any violation of the log invariant
// or of the streamed-output limits (CheckStreamedOutput).
// It returns the folded run states for further assertions.
func LogInvariant(ctx context.Context, t testing.TB, src Source) map[string]events.RunState {
	t.Helper()
	evs, err := src(ctx)
	if err != nil {
		t.Fatalf("log invariant: reading events: %v", err)
	}
	states, err := CheckLog(evs)
	if err != nil {
		t.Fatalf("log invariant violated:\n%v", err)
	}
	if err := CheckStreamedOutput(evs); err != nil {
		t.Fatalf("streamed output over its limits:\n%v", err)
	}
	return states
}

// RunIDs returns the ids of the runs in states, sorted.
func RunIDs(states map[string]events.RunState) []string {
	ids := make([]string, 0, len(states))
	for id := range states {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}
