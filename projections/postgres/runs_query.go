package postgres

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
)

// Run is one row of the runs read model.
type Run struct {
	RunID             string          `json:"runId"`
	TenantID          string          `json:"tenantId"`
	PlatformSessionID string          `json:"platformSessionId,omitempty"`
	AgentID           string          `json:"agentId"`
	ParentRunID       string          `json:"parentRunId,omitempty"`
	Status            string          `json:"status"`
	PauseReason       string          `json:"pauseReason,omitempty"`
	ErrorCode         string          `json:"errorCode,omitempty"`
	CancelReason      string          `json:"cancelReason,omitempty"`
	Input             json.RawMessage `json:"input"`
	SandboxKey        json.RawMessage `json:"sandboxKey"`
	Metadata          json.RawMessage `json:"metadata,omitempty"`
	LastSeq           int64           `json:"lastSeq"`
	CreatedAt         time.Time       `json:"createdAt"`
	UpdatedAt         time.Time       `json:"updatedAt"`
	// SnapshotHash is the hash of the run's capability snapshot, once frozen
	// (runtime.capability.snapshot_frozen).
	SnapshotHash string `json:"snapshotHash,omitempty"`
	Usage        Usage  `json:"usage"`
	// AcceptedPartition and AcceptedOffset are the position of the run's
	// runtime.run.accepted in the events topic (-1 when projected before
	// they were kept): the order in which the runs of a sandbox key start.
	AcceptedPartition int32 `json:"acceptedPartition"`
	AcceptedOffset    int64 `json:"acceptedOffset"`
	// QueuePosition is set for a queued run only: its place in its sandbox
	// key's queue as its log last recorded it (1 means it starts next), or,
	// for a run with no recorded place, how many runs of its key are ahead
	// of it when it is read, the running one included (0 means nothing is
	// ahead and it is about to start). A paused run is never ahead: it
	// yields its key (queuePositionSQL).
	QueuePosition *int64 `json:"queuePosition,omitempty"`
}

// Usage is the token accounting of a run's model calls.
type Usage struct {
	// ModelCalls counts the agent loop's completed model calls
	// (assistant_message items).
	ModelCalls int64 `json:"modelCalls"`
	// PromptTokens, CompletionTokens and TotalTokens sum the usage of the
	// model calls and of the compactions' summarising calls.
	PromptTokens     int64 `json:"promptTokens"`
	CompletionTokens int64 `json:"completionTokens"`
	TotalTokens      int64 `json:"totalTokens"`
	// Compactions counts runtime.context.compacted events.
	Compactions int64 `json:"compactions"`
}

// RunFilter selects runs for a listing. Empty fields do not filter.
type RunFilter struct {
	TenantID          string // required
	PlatformSessionID string
	Status            string
	// After is an opaque cursor returned by the previous page ("" = first page).
	After string
	Limit int
}

// runColumnsSQL selects a Run from runs AS r.
const runColumnsSQL = `r.run_id, r.tenant_id, r.platform_session_id, r.agent_id, r.parent_run_id, r.status,
	r.pause_reason, r.error_code, r.cancel_reason, r.input, r.sandbox_key, r.metadata, r.last_seq, r.created_at,
	r.updated_at, r.snapshot_hash, r.model_calls, r.prompt_tokens, r.completion_tokens, r.total_tokens,
	r.compactions, r.accepted_partition, r.accepted_offset, ` + queuePositionSQL

// queuePositionSQL is the queue position of a queued run r (NULL for any
// other). It is the place the run's log last recorded
// (runtime.run.queued: 1 = it starts next), which the executor records when
// the run joins its key's queue (accepted, or resumed from a pause, while
// another run holds the key) and each time it moves up. A run with no
// recorded place (accepted before places were recorded, or about to start)
// gets how many runs of its key are ahead of it, computed when read: the
// running one, and the queued ones accepted earlier. Runs of one sandbox key
// share a partition, where the order of their runtime.run.accepted offsets
// is their order; runs whose offsets cannot be compared (on different
// partitions, or projected before the offsets were kept) are ordered by
// created_at, then run id. A paused run is not ahead: it yielded the key.
// runs_tenant_sandbox_active serves the count (its predicate is the IN
// list's), run_events' key the place.
const queuePositionSQL = `CASE WHEN r.status = 'queued' THEN COALESCE(
	(SELECT (e.envelope->'payload'->>'position')::bigint FROM run_events AS e
		WHERE e.run_id = r.run_id AND e.type = 'runtime.run.queued' ORDER BY e.seq DESC LIMIT 1),
	(SELECT count(*) FROM runs AS o
	WHERE o.tenant_id = r.tenant_id AND o.sandbox_key = r.sandbox_key AND o.run_id <> r.run_id
		AND o.status IN ('queued', 'running', 'paused') AND o.status <> 'paused'
		AND (o.status <> 'queued' OR CASE
			WHEN o.accepted_partition = r.accepted_partition AND o.accepted_offset <> r.accepted_offset
				THEN o.accepted_offset < r.accepted_offset
			ELSE o.created_at < r.created_at OR (o.created_at = r.created_at AND o.run_id COLLATE "C" < r.run_id)
			END))) END`

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

// getRunSQL reads one run by tenant ($1) and id ($2).
const getRunSQL = "SELECT " + runColumnsSQL + " FROM runs AS r WHERE r.tenant_id = $1 AND r.run_id = $2"

// GetRun returns the run runID of tenantID, or ErrNotFound if the tenant has
// no such run (including a run that exists for another tenant).
func (s *Queries) GetRun(ctx context.Context, tenantID, runID string) (Run, error) {
	r, err := scanRun(s.pool.QueryRow(ctx, getRunSQL, tenantID, runID))
	if errors.Is(err, pgx.ErrNoRows) {
		return Run{}, fmt.Errorf("run %s: %w", runID, ErrNotFound)
	}
	if err != nil {
		return Run{}, fmt.Errorf("get run %s: %w", runID, err)
	}
	return r, nil
}

// runCursor is the position after the last run of a page.
type runCursor struct {
	CreatedAt int64  `json:"c"` // Unix microseconds, the precision of timestamptz
	RunID     string `json:"r"`
}

func (c runCursor) encode() string {
	return base64.RawURLEncoding.EncodeToString(mustJSON(c))
}

func decodeCursor(s string) (runCursor, error) {
	var c runCursor
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err == nil {
		err = json.Unmarshal(raw, &c)
	}
	if err != nil || c.RunID == "" || !plainText(c.RunID) {
		return runCursor{}, ErrInvalidCursor
	}
	return c, nil
}

// ListRuns returns a page of the tenant's runs matching f, newest first
// (created_at descending, then run_id ascending), and the cursor of the next
// page ("" on the last page). Paging with the returned cursors visits every
// run that existed when the listing began exactly once, even while runs are
// created. f.Limit <= 0 means 50; at most 500. A cursor not issued by
// ListRuns yields ErrInvalidCursor.
func (s *Queries) ListRuns(ctx context.Context, f RunFilter) ([]Run, string, error) {
	if f.TenantID == "" {
		return nil, "", errors.New("list runs: tenant id is required")
	}
	sql, args, err := listRunsQuery(f)
	if err != nil {
		return nil, "", fmt.Errorf("list runs: %w", err)
	}
	limit := clampLimit(f.Limit, defaultRunLimit, maxRunLimit)
	rows, err := s.pool.Query(ctx, sql, append(args, limit+1)...)
	if err != nil {
		return nil, "", fmt.Errorf("list runs: %w", err)
	}
	runs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Run, error) { return scanRun(row) })
	if err != nil {
		return nil, "", fmt.Errorf("list runs: %w", err)
	}
	if len(runs) <= limit {
		return runs, "", nil
	}
	runs = runs[:limit]
	last := runs[limit-1]
	return runs, runCursor{CreatedAt: last.CreatedAt.UnixMicro(), RunID: last.RunID}.encode(), nil
}

// listRunsQuery builds the keyset query of f; its last placeholder, the
// limit, is left for the caller.
func listRunsQuery(f RunFilter) (string, []any, error) {
	sql := "SELECT " + runColumnsSQL + " FROM runs AS r WHERE r.tenant_id = $1"
	args := []any{f.TenantID}
	add := func(cond string, v ...any) {
		args = append(args, v...)
		sql += " AND " + cond
	}
	if f.PlatformSessionID != "" {
		add("r.platform_session_id = $"+strconv.Itoa(len(args)+1), f.PlatformSessionID)
	}
	if f.Status != "" {
		add("r.status = $"+strconv.Itoa(len(args)+1), f.Status)
	}
	if f.After != "" {
		c, err := decodeCursor(f.After)
		if err != nil {
			return "", nil, err
		}
		t, r := "$"+strconv.Itoa(len(args)+1), "$"+strconv.Itoa(len(args)+2)
		add("(r.created_at < "+t+" OR (r.created_at = "+t+" AND r.run_id > "+r+"))", time.UnixMicro(c.CreatedAt), c.RunID)
	}
	return sql + " ORDER BY r.created_at DESC, r.run_id LIMIT $" + strconv.Itoa(len(args)+1), args, nil
}
