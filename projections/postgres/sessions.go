package postgres

import (
	"time"

	"github.com/jackc/pgx/v5"
)

// lockSessionsSQL locks the sessions of the batch's runs, in key order so
// that two batches cannot deadlock. A sessions row reads the first and last
// run of the session from runs, which other partitions write concurrently:
// under the lock, the refresh below (a later statement, so a later snapshot
// under READ COMMITTED) sees every run committed by the previous holder.
// The locks have two keys, which never collide with the one-key partition
// locks (Postgres keeps the key spaces apart); the first, 1936028531
// (0x73657373, "sess"), is arbitrary but fixed forever.
const lockSessionsSQL = `SELECT count(pg_advisory_xact_lock(1936028531, k)) FROM (
	SELECT DISTINCT hashtext(r.tenant_id || '/' || r.platform_session_id) AS k
	FROM unnest($1::text[]) AS u(id) CROSS JOIN LATERAL (` + runByID + `) AS r
	WHERE r.platform_session_id <> '' ORDER BY k) AS s`

// runByID reads the session of the run u.id by its key. OFFSET 0 keeps the
// planner from turning it into a join, whose cached generic plan (the
// batch's statements are prepared once per connection) scans all of runs:
// ~2 ms per batch at 15k runs, against 0.1 ms for lookups by key.
const runByID = `SELECT tenant_id, platform_session_id FROM runs WHERE run_id = u.id OFFSET 0`

// refreshSessionsSQL updates the sessions rows of the batch's runs. The
// first and last run are read from runs through its session index; the run
// count grows by the runs accepted in this batch (each is applied exactly
// once) and the last activity is the latest occurredAt of any event, so the
// row never depends on the order in which partitions were applied and costs
// the same however many runs the session has. Unchanged rows are not
// rewritten.
const refreshSessionsSQL = `WITH b AS (
	SELECT r.tenant_id AS t, r.platform_session_id AS s, count(*) FILTER (WHERE u.ins) AS n, max(u.la) AS la
	FROM unnest($1::text[], $2::bool[], $3::timestamptz[]) AS u(id, ins, la)
	CROSS JOIN LATERAL (` + runByID + `) AS r
	WHERE r.platform_session_id <> '' GROUP BY r.tenant_id, r.platform_session_id)
INSERT INTO sessions (tenant_id, platform_session_id, first_run_id, last_run_id, last_run_status, run_count,
	first_run_at, last_activity_at)
SELECT b.t, b.s, f.run_id, l.run_id, l.status, b.n, f.created_at, b.la
FROM b
CROSS JOIN LATERAL (SELECT run_id, created_at FROM runs WHERE tenant_id = b.t AND platform_session_id = b.s
	ORDER BY created_at, run_id COLLATE "C" LIMIT 1) AS f
CROSS JOIN LATERAL (SELECT run_id, status FROM runs WHERE tenant_id = b.t AND platform_session_id = b.s
	ORDER BY created_at DESC, run_id COLLATE "C" DESC LIMIT 1) AS l
ON CONFLICT (tenant_id, platform_session_id) DO UPDATE SET
	first_run_id = EXCLUDED.first_run_id, last_run_id = EXCLUDED.last_run_id,
	last_run_status = EXCLUDED.last_run_status, run_count = sessions.run_count + EXCLUDED.run_count,
	first_run_at = EXCLUDED.first_run_at,
	last_activity_at = GREATEST(sessions.last_activity_at, EXCLUDED.last_activity_at)
WHERE EXCLUDED.run_count > 0 OR EXCLUDED.last_activity_at > sessions.last_activity_at
	OR (sessions.first_run_id, sessions.last_run_id, sessions.last_run_status, sessions.first_run_at)
	IS DISTINCT FROM (EXCLUDED.first_run_id, EXCLUDED.last_run_id, EXCLUDED.last_run_status, EXCLUDED.first_run_at)`

// queueSessions refreshes the sessions of the runs whose rows the batch
// changed. It must follow the runs statements.
func queueSessions(b *pgx.Batch, p *batchPlan) {
	if len(p.advanced) == 0 {
		return
	}
	inserted, activity := make([]bool, len(p.advanced)), make([]time.Time, len(p.advanced))
	for i, id := range p.advanced {
		r := p.runs[id]
		inserted[i], activity[i] = r.inserted, ms(r.lastActivity)
	}
	// Plan the sessions statements for their own arguments. They are
	// prepared once per connection, and a generic plan cached while runs was
	// small (or not yet analysed) made the refresh take 200 ms a batch
	// instead of 2 ms, so the whole projection several times slower, in some
	// runs and not others. The setting ends with the transaction.
	b.Queue("SET LOCAL plan_cache_mode = force_custom_plan")
	b.Queue(lockSessionsSQL, p.advanced)
	b.Queue(refreshSessionsSQL, p.advanced, inserted, activity)
}
