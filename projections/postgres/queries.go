package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Page sizes: the defaults suit one screen of a console; the maxima bound
// the memory of one response (an event envelope can be hundreds of KiB).
const (
	defaultRunLimit   = 50
	maxRunLimit       = 500
	defaultEventLimit = 100
	maxEventLimit     = 1000
)

// DefaultEventPageBytes bounds the envelopes of one events page: 1 MiB keeps
// a page of a run with large outputs a quick response (a thousand events of
// 32 KiB would be 32 MiB), while pages of ordinary events still hold
// hundreds.
const DefaultEventPageBytes = 1 << 20

// runColumnsSQL selects a Run from runs AS r.
const runColumnsSQL = `r.run_id, r.tenant_id, r.platform_session_id, r.agent_id, r.parent_run_id, r.status,
	r.pause_reason, r.error_code, r.cancel_reason, r.input, r.sandbox_key, r.metadata, r.last_seq, r.created_at,
	r.updated_at, r.snapshot_hash, r.model_calls, r.prompt_tokens, r.completion_tokens, r.total_tokens,
	r.compactions, r.accepted_partition, r.accepted_offset, ` + queuePositionSQL

// queuePositionSQL is the queue position of a queued run r (NULL for any
// other): how many runs of its sandbox key are ahead of it — the running or
// paused one, and the queued ones accepted earlier. Runs of one
// sandbox key share a partition, where the order of their
// runtime.run.accepted offsets is the order in which the executor starts
// them. Runs whose offsets cannot be compared (on different partitions, or
// projected before the offsets were kept) are ordered by created_at, then
// run id. It is computed when read, since it changes whenever a run of the
// key starts or ends; runs_tenant_sandbox_active serves the count.
const queuePositionSQL = `CASE WHEN r.status = 'queued' THEN (SELECT count(*) FROM runs AS o
	WHERE o.tenant_id = r.tenant_id AND o.sandbox_key = r.sandbox_key AND o.run_id <> r.run_id
		AND o.status IN ('queued', 'running', 'paused')
		AND (o.status <> 'queued' OR CASE
			WHEN o.accepted_partition = r.accepted_partition AND o.accepted_offset <> r.accepted_offset
				THEN o.accepted_offset < r.accepted_offset
			ELSE o.created_at < r.created_at OR (o.created_at = r.created_at AND o.run_id COLLATE "C" < r.run_id)
			END)) END`

func scanRun(row pgx.Row) (Run, error) {
	var r Run
	u := &r.Usage
	err := row.Scan(&r.RunID, &r.TenantID, &r.PlatformSessionID, &r.AgentID, &r.ParentRunID, &r.Status,
		&r.PauseReason, &r.ErrorCode, &r.CancelReason, &r.Input, &r.SandboxKey, &r.Metadata, &r.LastSeq,
		&r.CreatedAt, &r.UpdatedAt, &r.SnapshotHash, &u.ModelCalls, &u.PromptTokens, &u.CompletionTokens,
		&u.TotalTokens, &u.Compactions, &r.AcceptedPartition, &r.AcceptedOffset, &r.QueuePosition)
	r.CreatedAt, r.UpdatedAt = r.CreatedAt.UTC(), r.UpdatedAt.UTC()
	return r, err
}

// GetRun returns the run runID of tenantID, or ErrNotFound if the tenant has
// no such run (including a run that exists for another tenant).
func (s *Store) GetRun(ctx context.Context, tenantID, runID string) (Run, error) {
	r, err := scanRun(s.pool.QueryRow(ctx,
		"SELECT "+runColumnsSQL+" FROM runs AS r WHERE r.tenant_id = $1 AND r.run_id = $2", tenantID, runID))
	if errors.Is(err, pgx.ErrNoRows) {
		return Run{}, fmt.Errorf("run %s: %w", runID, ErrNotFound)
	}
	if err != nil {
		return Run{}, fmt.Errorf("get run %s: %w", runID, err)
	}
	return r, nil
}

// ListEvents returns up to limit events of the run runID of tenantID with
// seq > afterSeq, in seq order (limit <= 0 means 100; at most 1000), and at
// most maxBytes bytes of envelopes (maxBytes <= 0 means DefaultEventPageBytes):
// the page ends before the event that would pass maxBytes, except that its
// first event is always returned, however large, so paging always
// progresses. A run unknown to the tenant has no events.
func (s *Store) ListEvents(ctx context.Context, tenantID, runID string, afterSeq int64, limit, maxBytes int) ([]Event, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultEventPageBytes
	}
	// The window sums the sizes of the page's rows in seq order; only the
	// rows that fit are sent.
	rows, err := s.pool.Query(ctx, `SELECT run_id, seq, event_id, type, tenant_id, platform_session_id, item_id,
	command_id, occurred_at, emitted_at, envelope
FROM (SELECT *, sum(octet_length(envelope::text)) OVER (ORDER BY seq) AS upto, row_number() OVER (ORDER BY seq) AS n
	FROM (SELECT run_id, seq, event_id, type, tenant_id, platform_session_id, item_id, command_id, occurred_at,
		emitted_at, envelope
		FROM run_events WHERE run_id = $1 AND tenant_id = $2 AND seq > $3 ORDER BY seq LIMIT $4) AS page) AS sized
WHERE upto <= $5 OR n = 1 ORDER BY seq`,
		runID, tenantID, afterSeq, clampLimit(limit, defaultEventLimit, maxEventLimit), maxBytes)
	if err != nil {
		return nil, fmt.Errorf("list events of run %s: %w", runID, err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Event, error) {
		var e Event
		err := row.Scan(&e.RunID, &e.Seq, &e.EventID, &e.Type, &e.TenantID, &e.PlatformSessionID, &e.ItemID,
			&e.CommandID, &e.OccurredAt, &e.EmittedAt, &e.Envelope)
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("list events of run %s: %w", runID, err)
	}
	return out, nil
}

// GetCommand returns the latest outcome of commandID for tenantID, or
// ErrNotFound if none is recorded for that tenant. The CreatedRunID of a
// duplicate is its original command's.
func (s *Store) GetCommand(ctx context.Context, tenantID, commandID string) (Command, error) {
	var c Command
	err := s.pool.QueryRow(ctx, `SELECT c.command_id, c.run_id, c.tenant_id, c.type, c.idempotency_key, c.outcome,
	c.first_outcome, c.code, c.message, c.original_command_id, c.original_outcome, c.original_code, c.seq,
	c.updated_at, COALESCE(NULLIF(c.created_run_id, ''), o.created_run_id, '')
FROM commands AS c LEFT JOIN commands AS o ON c.original_command_id <> '' AND o.command_id = c.original_command_id
	AND o.tenant_id = c.tenant_id AND o.run_id = c.run_id
WHERE c.tenant_id = $1 AND c.command_id = $2`, tenantID, commandID).Scan(
		&c.CommandID, &c.RunID, &c.TenantID, &c.Type, &c.IdempotencyKey, &c.Outcome, &c.FirstOutcome, &c.Code,
		&c.Message, &c.OriginalCommandID, &c.OriginalOutcome, &c.OriginalCode, &c.Seq, &c.UpdatedAt,
		&c.CreatedRunID)
	if errors.Is(err, pgx.ErrNoRows) {
		return Command{}, fmt.Errorf("command %s: %w", commandID, ErrNotFound)
	}
	if err != nil {
		return Command{}, fmt.Errorf("get command %s: %w", commandID, err)
	}
	c.UpdatedAt = c.UpdatedAt.UTC()
	return c, nil
}

// CheckpointsOf returns the next offset to read per partition of topic for
// projector, as last committed by ApplyBatch. Partitions never applied are
// absent (start from the beginning).
func (s *Store) CheckpointsOf(ctx context.Context, projector, topic string) (map[int32]int64, error) {
	rows, err := s.pool.Query(ctx,
		"SELECT partition, next_offset FROM projector_checkpoints WHERE projector = $1 AND topic = $2",
		projector, topic)
	if err != nil {
		return nil, fmt.Errorf("read checkpoints of %s on %s: %w", projector, topic, err)
	}
	out := make(map[int32]int64)
	var part int32
	var next int64
	_, err = pgx.ForEachRow(rows, []any{&part, &next}, func() error {
		out[part] = next
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read checkpoints of %s on %s: %w", projector, topic, err)
	}
	return out, nil
}

// Heartbeat records that instance of projector is alive now (server time).
func (s *Store) Heartbeat(ctx context.Context, projector, instance string) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO projector_heartbeats (projector, instance, beat_at)
VALUES ($1, $2, now()) ON CONFLICT (projector, instance) DO UPDATE SET beat_at = now()`, projector, instance)
	if err != nil {
		return fmt.Errorf("heartbeat of %s/%s: %w", projector, instance, err)
	}
	return nil
}

// LastHeartbeat returns the latest heartbeat of any instance of projector,
// or ErrNotFound if none was ever recorded.
func (s *Store) LastHeartbeat(ctx context.Context, projector string) (time.Time, error) {
	var at *time.Time
	err := s.pool.QueryRow(ctx, "SELECT max(beat_at) FROM projector_heartbeats WHERE projector = $1",
		projector).Scan(&at)
	if err != nil {
		return time.Time{}, fmt.Errorf("last heartbeat of %s: %w", projector, err)
	}
	if at == nil {
		return time.Time{}, fmt.Errorf("heartbeat of %s: %w", projector, ErrNotFound)
	}
	return at.UTC(), nil
}

func clampLimit(limit, def, maxLimit int) int {
	switch {
	case limit <= 0:
		return def
	case limit > maxLimit:
		return maxLimit
	}
	return limit
}
