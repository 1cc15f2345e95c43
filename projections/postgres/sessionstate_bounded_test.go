package postgres_test

import (
	"context"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/events/eventstest"
	"github.com/xbot-runtime/xbot/projections/postgres"
)

// TestSessionStateReadsEachListFromItsIndex: every statement of a session's
// state, planned as a prepared statement's generic plan is, can read the
// session's rows from its partial index (migration 0009) in the order it
// lists them, so that on a table of any size it reads a few index entries:
// its cost does not grow with the session's history
// (BenchmarkSessionState).
func TestSessionStateReadsEachListFromItsIndex(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	off := offsets{}
	for _, session := range []string{"s-other", "s-bench"} {
		for i := range 150 {
			f.apply(t, off.records(t, int32(i%4), stateBenchRun(t, session, i, i == 149)...))
		}
	}
	ctx := context.Background()
	if _, err := f.pool.Exec(ctx, "ANALYZE"); err != nil {
		t.Fatal(err)
	}
	conn, err := f.pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	// A table this small is cheaper to scan whole; what is checked is that
	// each statement can read its index, in its order (a predicate that
	// does not match the index's would leave only a scan).
	for _, set := range []string{"SET plan_cache_mode = force_generic_plan", "SET enable_seqscan = off",
		"SET enable_bitmapscan = off"} {
		if _, err := conn.Exec(ctx, set); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string][]string{
		"head":     {"runs_session_live"},
		"open":     {"runs_session_live"},
		"pending":  {"approvals_session_open", "items_session_questions_open"},
		"closed":   {"approvals_session_closed", "items_session_questions_closed"},
		"queued":   {"commands_session_queued"},
		"admitted": {"commands_session_admitted"},
	}
	for name, sql := range postgres.SessionStateSQL() {
		if _, err := conn.Exec(ctx, "PREPARE state_"+name+"(text, text) AS "+sql); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		rows, err := conn.Query(ctx, "EXPLAIN EXECUTE state_"+name+"('acme', 's-bench')")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		plan := strings.Join(lines, "\n")
		for _, index := range want[name] {
			if !strings.Contains(plan, " using "+index+" on ") {
				t.Errorf("%s does not read %s:\n%s", name, index, plan)
			}
		}
		if strings.Contains(plan, "Seq Scan") {
			t.Errorf("%s scans a table:\n%s", name, plan)
		}
	}
	if len(want) != len(postgres.SessionStateSQL()) {
		t.Errorf("statements %d, planned %d", len(postgres.SessionStateSQL()), len(want))
	}
}

// TestSessionStateListsAreAFullScans: a session with more closed
// interactions and admitted inputs than the state shows, approvals and
// questions interleaved in time, some of each open, and another session
// beside it: each list equals what a scan of the session's whole history
// (the statements before migration 0009) gives.
func TestSessionStateListsAreAFullScans(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	off := offsets{}
	for _, session := range []string{"s-other", "s-long"} {
		for i := range 130 {
			f.apply(t, off.records(t, int32(i%4), historyRun(t, session, i, i >= 127)...))
		}
	}
	st, err := f.store.GetSessionState(ctx, "acme", "s-long")
	if err != nil {
		t.Fatal(err)
	}
	if !st.ClosedMore || !st.AdmittedMore || len(st.Pending) != 3*2 || len(st.Queued) != 3 {
		t.Fatalf("closed more %v, admitted more %v, pending %d, queued %d: the session is not what the test needs",
			st.ClosedMore, st.AdmittedMore, len(st.Pending), len(st.Queued))
	}
	ids := func(list []postgres.SessionInteraction) []string {
		out := make([]string, len(list))
		for i, v := range list {
			out[i] = v.RunID + "/" + v.ItemID + "/" + v.Status
		}
		return out
	}
	closed := slices.Clone(st.Closed)
	slices.Reverse(closed) // the state shows them oldest first
	admitted := slices.Clone(st.Admitted)
	slices.Reverse(admitted)
	for name, c := range map[string]struct {
		got  []string
		scan string
		max  int
	}{
		"pending":  {ids(st.Pending), fullInteractions + `WHERE status = 'open' ORDER BY opened_at, run_id, item_id`, postgres.MaxStateInteractions},
		"closed":   {ids(closed), fullInteractions + `WHERE status <> 'open' ORDER BY closed_at DESC NULLS LAST, run_id DESC, item_id DESC`, postgres.MaxStateInteractions},
		"queued":   {st.Queued, fullInputs + `WHERE state = 'queued' ORDER BY updated_at, command_id`, postgres.MaxStateInputs},
		"admitted": {admitted, fullInputs + `WHERE state = 'admitted' ORDER BY updated_at DESC, command_id DESC`, postgres.MaxStateInputs},
	} {
		rows, err := f.pool.Query(ctx, c.scan, "acme", "s-long")
		if err != nil {
			t.Fatal(name, err)
		}
		want, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(name, err)
		}
		if want = want[:min(len(want), c.max)]; !slices.Equal(c.got, want) {
			t.Errorf("%s: %d %v\nthe full scan: %d %v", name, len(c.got), c.got, len(want), want)
		}
	}
}

// fullInteractions and fullInputs read a session's interactions and inputs
// as GetSessionState did before migration 0009: every run of the session
// joined with its approvals, questions and commands.
const (
	fullInteractions = `WITH session_runs AS (
  SELECT run_id FROM runs WHERE tenant_id = $1 AND platform_session_id = $2
), interactions AS (
  SELECT a.run_id, a.item_id,
    CASE a.status WHEN 'pending' THEN 'open'
      WHEN 'resolved' THEN CASE a.decision WHEN 'allow' THEN 'approved' ELSE 'denied' END
      ELSE a.status END AS status, a.requested_at AS opened_at, a.resolved_at AS closed_at
  FROM approvals a JOIN session_runs USING (run_id)
  UNION ALL
  SELECT i.run_id, i.item_id,
    CASE WHEN i.status IN ('started', 'awaiting_approval') THEN 'open'
      WHEN i.status = 'failed' AND i.error_code = 'expired' THEN 'expired'
      WHEN i.status = 'failed' THEN 'cancelled' ELSE 'answered' END, i.started_at, i.completed_at
  FROM items i JOIN session_runs USING (run_id) WHERE i.type = 'clarification_request'
)
SELECT run_id || '/' || item_id || '/' || status FROM interactions `
	fullInputs = `WITH inputs AS (
  SELECT COALESCE(NULLIF(c.idempotency_key, ''), c.command_id) AS input_id, c.command_id, c.updated_at,
    CASE WHEN c.type = 'AppendUserInput' AND c.outcome = 'accepted' THEN 'queued'
      WHEN c.type = 'AppendUserInput' AND c.outcome = 'applied' THEN 'admitted'
      WHEN c.type = 'CreateRun' AND c.outcome = 'accepted' AND c.idempotency_key NOT LIKE 'follow\_up:%' THEN 'admitted'
    END AS state
  FROM commands c JOIN runs r ON r.run_id = c.run_id
  WHERE r.tenant_id = $1 AND r.platform_session_id = $2 AND c.tenant_id = $1
)
SELECT input_id FROM inputs `
)

// historyRun is run i of a long session: a steer applied, a tool call
// approved or denied, a question answered, then completed; or, when open,
// a steer still queued, a question asked and an approval awaited.
func historyRun(tb testing.TB, session string, i int, open bool) []events.Envelope {
	l := startedNth(tb, session, i)
	steer := events.NewID("cmd")
	key := fmt.Sprintf("%s-steer-%d", session, i)
	l.CommandAccepted(steer, events.CommandAcceptedPayload{CommandType: "AppendUserInput", IdempotencyKey: key})
	question := events.ToolCallRef{ID: "call_q", Name: "ask_user", Arguments: `{"question":"Which branch?"}`}
	ask := events.NewID("itm")
	l.ToolStarted(ask, "", events.ItemClarificationRequest, question)
	call := events.ToolCallRef{ID: "call_1", Name: "shell", Arguments: `{"command":"echo deploy"}`}
	tool := events.NewID("itm")
	l.ToolStarted(tool, "", events.ItemCommandExecution, call)
	l.Ask(tool, call, "deploy", "deploys need a person")
	if open {
		l.Paused(events.PauseAwaitingApproval, tool)
		return l.Events()
	}
	l.Steer(events.NewID("itm"), steer, "also this")
	l.CommandApplied(steer, events.CommandAppliedPayload{CommandType: "AppendUserInput", IdempotencyKey: key})
	l.ToolCompleted(ask, events.ItemClarificationRequest, question, events.ToolResultData{Output: "main"})
	l.Paused(events.PauseAwaitingApproval, tool)
	decision := events.DecisionAllow
	if i%3 == 0 {
		decision = events.DecisionDeny
	}
	l.Decide(eventstest.Decision{CommandID: events.NewID("cmd"), ItemID: tool, Decision: decision,
		Scope: events.ScopeItem, Actor: events.Actor{Type: "user", ID: "u-1"}})
	if decision == events.DecisionAllow {
		l.ToolCompleted(tool, events.ItemCommandExecution, call, events.ToolResultData{Output: "deployed"})
	}
	l.assistantMessage(1)
	l.Completed("done")
	return l.Events()
}

// TestMigrationFillsSessionsAsTheProjectorWrites: migration 0009's backfill
// of items' and commands' sessions, run on rows written without them, gives
// the rows the projector writes: a migrated view equals a rebuilt one.
func TestMigrationFillsSessionsAsTheProjectorWrites(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	off := offsets{}
	f.apply(t, off.records(t, 0, newRichRun(t, "acme", "s-1").Events()...))
	f.apply(t, off.records(t, 1, historyRun(t, "s-2", 0, false)...))
	f.apply(t, off.records(t, 2, historyRun(t, "s-2", 1, true)...))
	f.apply(t, off.records(t, 3, newRichRun(t, "acme", "").Events()...))
	written := f.checksumTables(t)
	if _, err := f.pool.Exec(ctx, `UPDATE items SET platform_session_id = '';
UPDATE commands SET platform_session_id = ''`); err != nil {
		t.Fatal(err)
	}
	if blank := f.checksumTables(t); blank["items"] == written["items"] || blank["commands"] == written["commands"] {
		t.Fatal("the projector wrote no session to items or commands")
	}
	raw, err := fs.ReadFile(postgres.Migrations, "0009_session_state_bounded.sql")
	if err != nil {
		t.Fatal(err)
	}
	var backfills int
	for stmt := range strings.SplitSeq(string(raw), ";") {
		if stmt = strings.TrimSpace(stmt); strings.HasPrefix(stmt, "UPDATE") {
			if _, err := f.pool.Exec(ctx, stmt); err != nil {
				t.Fatal(err)
			}
			backfills++
		}
	}
	if backfills != 2 {
		t.Fatalf("the migration has %d backfills, want 2", backfills)
	}
	if migrated := f.checksumTables(t); migrated["items"] != written["items"] || migrated["commands"] != written["commands"] {
		t.Errorf("backfilled items %s, commands %s; the projector wrote %s, %s",
			migrated["items"], migrated["commands"], written["items"], written["commands"])
	}
}
