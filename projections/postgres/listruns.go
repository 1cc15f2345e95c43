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
func (s *Store) ListRuns(ctx context.Context, f RunFilter) ([]Run, string, error) {
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
