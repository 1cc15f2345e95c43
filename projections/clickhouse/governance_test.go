package clickhouse_test

import (
	"context"
	"io/fs"
	"strings"
	"testing"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/events/eventstest"
	"github.com/xbot-runtime/xbot/projections/clickhouse"
)

// TestGovernanceColumnsExtracted checks the columns of approval requests,
// decisions, grants, blocked calls, compactions and expiries.
func TestGovernanceColumnsExtracted(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.apply(t, records(t, 3, workload(t)...), 20)
	run3, x3, x4 := wid("run", "ACME3"), wid("itm", "ACME3X3"), wid("itm", "ACME3X4")
	grant3 := events.DerivedID("grt", wid("cmd", "C9"))
	cases := []struct{ query, want string }{
		{"SELECT concat(tool_name, ' ', rule_id, ' ', approval_id, ' ', reason) FROM audit_events FINAL " +
			"WHERE type = 'runtime.item.awaiting_approval' AND item_id = '" + x3 + "'",
			"shell git-push " + eventstest.ApprovalID(run3, x3) + " pushes to a remote"},
		{"SELECT concat(item_id, ' ', approval_id, ' ', grant_id, ' ', actor_id) FROM audit_events FINAL " +
			"WHERE type = 'runtime.approval.decision_submitted' AND run_id = '" + run3 + "' ORDER BY seq",
			x3 + " " + eventstest.ApprovalID(run3, x3) + "  alice | " + x4 + " " + eventstest.ApprovalID(run3, x4) + " " + grant3 + " alice"},
		{"SELECT concat(grant_id, ' ', scope, ' ', tool_name, ' ', rule_id, ' ', item_id, ' ', actor_type, ':', actor_id) " +
			"FROM audit_events FINAL WHERE type = 'runtime.permission_grant.applied' AND run_id = '" + run3 + "'",
			grant3 + " run shell git-push " + x3 + " user:alice"},
		{"SELECT concat(error_code, ' [', rule_id, '] ', message) FROM audit_events FINAL WHERE item_id = '" + wid("itm", "ACME4X3") +
			"' AND type = 'runtime.item.failed'",
			"blocked_by_policy [default.rm-root] blocked by policy rule default.rm-root: deleting the root file system is never allowed"},
		{"SELECT concat(error_code, ' [', rule_id, '] ', message) FROM audit_events FINAL WHERE item_id = '" + wid("itm", "GX1X2") +
			"' AND type = 'runtime.item.failed'", // recorded before item.failed carried ruleId
			"blocked_by_policy [] blocked by policy rule no-network: network access is disabled for CI agents"},
		{"SELECT concat(reason, ' ', toString(total_tokens), ' ', toString(visitParamExtractUInt(payload, 'afterTokens'))) " +
			"FROM audit_events FINAL WHERE type = 'runtime.context.compacted'", "before_model_request_threshold 96600 4200"},
		{"SELECT concat(pause_reason, ' ', toString(visitParamExtractUInt(payload, 'pauseTtlMs'))) FROM audit_events FINAL " +
			"WHERE type = 'runtime.run.expired'", "awaiting_approval 3600000"},
		{"SELECT substring(visitParamExtractString(payload, 'hash'), 1, 7) FROM audit_events FINAL " +
			"WHERE type = 'runtime.capability.snapshot_frozen' AND run_id = '" + run3 + "'", "sha256:"},
	}
	for _, c := range cases {
		if got := strings.Join(f.strs(t, c.query), " | "); got != c.want {
			t.Errorf("%s\n got %q\nwant %q", c.query, got, c.want)
		}
	}
}

// TestMigrateAfterAnUnrecordedAlter: an ALTER that took effect but was not
// recorded (it timed out, yet succeeded) must not stop later migrations.
func TestMigrateAfterAnUnrecordedAlter(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := f.conn.Exec(ctx, "DROP TABLE schema_migrations"); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := clickhouse.Migrate(ctx, f.conn); err != nil {
			t.Fatalf("migrate again: %v", err)
		}
	}
	files, err := fs.Glob(clickhouse.Migrations, "*.sql")
	if err != nil {
		t.Fatal(err)
	}
	if n := f.count(t, "SELECT count() FROM schema_migrations FINAL WHERE component = '"+clickhouse.Component+"'"); n != uint64(len(files)) {
		t.Errorf("%d versions recorded, want %d", n, len(files))
	}
}
