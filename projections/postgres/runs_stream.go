package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/xbot-runtime/xbot/events"
)

// Queries of the UI stream's backfill (projections/uistream): a session's
// runs in session order, by (created_at, run_id). A run's events, decoded,
// are StreamRunEvents (runevents_query.go).

// StreamRun is a run of a session as the UI stream orders them.
type StreamRun struct {
	RunID     string
	Status    string
	CreatedAt time.Time
}

// Ended reports whether the run's status is terminal.
func (r StreamRun) Ended() bool { return events.Status(r.Status).Terminal() }

// liveStatusesSQL lists, as SQL literals, the statuses of runs whose reply
// has not ended, in the words of the partial index runs_session_live
// (migration 0009): a query that filters by them, written as they are, can
// read the session's live runs from that index alone.
var liveStatusesSQL = func() string {
	var out []string
	for _, s := range events.Statuses() {
		if !s.Terminal() {
			out = append(out, "'"+string(s)+"'")
		}
	}
	return strings.Join(out, ", ")
}()

// sessionHeadSQL selects columns of the session ($1 tenant, $2 session)'s
// first run in session order whose reply has not ended or, when every
// reply has ended, its last run: two index probes.
func sessionHeadSQL(columns string) string {
	return `SELECT ` + columns + ` FROM (
  (SELECT ` + columns + `, 0 AS pick FROM runs
   WHERE tenant_id = $1 AND platform_session_id = $2 AND status IN (` + liveStatusesSQL + `)
   ORDER BY created_at, run_id LIMIT 1)
  UNION ALL
  (SELECT ` + columns + `, 1 AS pick FROM runs
   WHERE tenant_id = $1 AND platform_session_id = $2
   ORDER BY created_at DESC, run_id DESC LIMIT 1)
) head ORDER BY pick LIMIT 1`
}

const streamRunColumns = "run_id, status, created_at"

func scanStreamRun(row pgx.Row) (StreamRun, error) {
	var r StreamRun
	err := row.Scan(&r.RunID, &r.Status, &r.CreatedAt)
	r.CreatedAt = r.CreatedAt.UTC()
	return r, err
}

// StreamSessionRuns returns up to limit runs of the session sessionID of
// tenantID that come after (afterCreated, afterRunID) in session order; the
// zero time and "" list from the first run.
func (s *Queries) StreamSessionRuns(ctx context.Context, tenantID, sessionID string, afterCreated time.Time, afterRunID string, limit int) ([]StreamRun, error) {
	rows, err := s.pool.Query(ctx, "SELECT "+streamRunColumns+` FROM runs
WHERE tenant_id = $1 AND platform_session_id = $2 AND (created_at, run_id) > ($3, $4)
ORDER BY created_at, run_id LIMIT $5`,
		tenantID, sessionID, afterCreated, afterRunID, clampLimit(limit, defaultRunLimit, maxRunLimit))
	if err != nil {
		return nil, fmt.Errorf("runs of session %s: %w", sessionID, err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (StreamRun, error) { return scanStreamRun(row) })
	if err != nil {
		return nil, fmt.Errorf("runs of session %s: %w", sessionID, err)
	}
	return out, nil
}

// StreamSessionHead returns the session's first run (in session order) whose
// reply has not ended or, when every reply has ended, its last run. It
// returns ErrNotFound when the tenant has no run in the session.
func (s *Queries) StreamSessionHead(ctx context.Context, tenantID, sessionID string) (StreamRun, error) {
	r, err := scanStreamRun(s.pool.QueryRow(ctx, sessionHeadSQL(streamRunColumns), tenantID, sessionID))
	if errors.Is(err, pgx.ErrNoRows) {
		return StreamRun{}, fmt.Errorf("session %s: %w", sessionID, ErrNotFound)
	}
	if err != nil {
		return StreamRun{}, fmt.Errorf("head of session %s: %w", sessionID, err)
	}
	return r, nil
}

// StreamSessionRun returns run runID if it belongs to the session sessionID
// of tenantID, else ErrNotFound.
func (s *Queries) StreamSessionRun(ctx context.Context, tenantID, sessionID, runID string) (StreamRun, error) {
	r, err := scanStreamRun(s.pool.QueryRow(ctx, "SELECT "+streamRunColumns+` FROM runs
WHERE tenant_id = $1 AND platform_session_id = $2 AND run_id = $3`, tenantID, sessionID, runID))
	if errors.Is(err, pgx.ErrNoRows) {
		return StreamRun{}, fmt.Errorf("run %s in session %s: %w", runID, sessionID, ErrNotFound)
	}
	if err != nil {
		return StreamRun{}, fmt.Errorf("run %s in session %s: %w", runID, sessionID, err)
	}
	return r, nil
}
