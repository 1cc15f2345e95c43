package postgres

import (
	"context"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"go.uber.org/zap"
)

// viewTables are the tables analyzeGrown checks: the read models, and the
// tables the queries write and read back (session owners, idempotency
// claims, and a session's run claims and revocations).
var viewTables = func() []string {
	names := []string{"session_owners", "idempotency_claims", "session_run_claims", "session_grant_revocations"}
	for _, t := range readModelTables {
		names = append(names, t.name)
	}
	return names
}()

// The projector analyzes a table of the view that has at least doubled in
// size since Postgres last analyzed or vacuumed it (or that never was, once
// it has two pages). It checks after every analyzeEvents applied events, at
// most once per analyzeGap.
//
// A young database needs it. The plan a connection caches for a prepared
// statement is made for the table's size when it is made, and it is
// replaced only when the table is analyzed. A lookup of one run by tenant
// and id planned on the empty table went on scanning every run of the
// tenant as the table grew, until autovacuum's first pass, up to a minute
// (its naptime) after the start: xbot bench's 6,000 runs on a fresh database
// ran at 354 runs/s that way and at 502 with the tables analyzed as they
// grew (docs/performance.md). Autovacuum analyzes a table again once a tenth
// of it changed, so on an established database nothing doubles between its
// passes and the check finds nothing to do; it also covers a database whose
// autovacuum is off.
const (
	analyzeEvents = 1_000
	analyzeGap    = time.Second
)

// analyzer decides when the projector checks the view's tables.
type analyzer struct {
	applied int       // events applied since the last check
	checked time.Time // the last check
}

// due notes n more events applied at now and reports whether the tables are
// to be checked.
func (a *analyzer) due(n int, now time.Time) bool {
	a.applied += n
	if a.applied < analyzeEvents || now.Sub(a.checked) < analyzeGap {
		return false
	}
	a.applied, a.checked = 0, now
	return true
}

// analyzeGrownBeside notes n more events applied and, when a check is due
// and none is in flight, prunes the session run claims the read model has
// made redundant (pruneRunClaims) and checks the tables, in a goroutine of
// its own, on a connection of its own, while the projector goes on with its
// next batch:
// ANALYZE samples every grown table, tens of milliseconds that no batch has
// to wait for (a fifth of the projector's time on a young database,
// docs/performance.md). The check ends with ctx; Close waits for it, and
// none starts after Close.
func (s *Projector) analyzeGrownBeside(ctx context.Context, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.analyze.due(n, time.Now()) || s.busy || s.closed {
		return
	}
	s.busy = true
	s.analyzing.Add(1)
	go func() {
		defer s.analyzing.Done()
		s.pruneRunClaims(ctx)
		s.analyzeGrown(ctx)
		s.mu.Lock()
		s.busy = false
		s.mu.Unlock()
	}()
}

// analyzeGrown analyzes every table of the view that has at least doubled
// since it was last analyzed or vacuumed and that this role may analyze
// (its owner's member: Postgres skips any other table with a warning,
// which would come back at every check). A failure is logged, not
// returned: the batch is committed already, and autovacuum analyzes the
// tables in time anyway.
func (s *Projector) analyzeGrown(ctx context.Context) {
	rows, err := s.pool.Query(ctx, `SELECT c.relname FROM unnest($1::text[]) AS t(name)
JOIN pg_class AS c ON c.oid = to_regclass(t.name)
WHERE pg_relation_size(c.oid) >= 2 * greatest(c.relpages, 1) * current_setting('block_size')::bigint
	AND pg_has_role(c.relowner, 'USAGE')`, viewTables)
	var grown []string
	if err == nil {
		grown, err = pgx.CollectRows(rows, pgx.RowTo[string])
	}
	if err == nil && len(grown) > 0 {
		names := make([]string, len(grown))
		for i, t := range grown {
			names[i] = pgx.Identifier{t}.Sanitize()
		}
		_, err = s.pool.Exec(ctx, "ANALYZE "+strings.Join(names, ", "))
	}
	if err != nil {
		if ctx.Err() == nil { // not the projector stopping
			s.log.Warn("analyzing the view's grown tables failed; autovacuum will", zap.Strings("tables", grown),
				zap.Error(err))
		}
		return
	}
	if len(grown) > 0 {
		s.log.Debug("analyzed the view's grown tables", zap.Strings("tables", grown))
	}
}

// pruneRunClaimsSQL deletes the claims (migration 0010) of the runs the
// read model holds in the claim's session.
const pruneRunClaimsSQL = `DELETE FROM session_run_claims AS c USING runs AS r
WHERE r.run_id = c.run_id AND r.tenant_id = c.tenant_id AND r.platform_session_id = c.platform_session_id`

// pruneRunClaims deletes the session run claims whose run the read model
// holds. A claim stands for a run the read model may not have yet when a
// revoke lists the session's runs (RevokeSessionGrant); once the run's row
// is committed, the revoke's listing of the read model finds it, so the
// claim only grew the table, by one row for every create into an existing
// session. A claim whose run never reached the log stays. A failure is
// logged, not returned: the next check prunes again.
func (s *Projector) pruneRunClaims(ctx context.Context) {
	tag, err := s.pool.Exec(ctx, pruneRunClaimsSQL)
	if err != nil {
		if ctx.Err() == nil {
			s.log.Warn("pruning the session run claims failed; the next check will", zap.Error(err))
		}
		return
	}
	if n := tag.RowsAffected(); n > 0 {
		s.log.Debug("pruned session run claims", zap.Int64("claims", n))
	}
}
