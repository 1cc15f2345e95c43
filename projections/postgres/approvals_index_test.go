package postgres_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/xbot-runtime/xbot/projections/postgres"
	"github.com/xbot-runtime/xbot/projections/postgres/postgrestest"
)

// TestAnApprovalByIDIsFoundThroughItsIndex: in a tenant of 20,000
// approvals, the lookup of one by its id (a chat button's payload) reads it
// through approvals_tenant_approval_id, not every approval of the tenant.
func TestAnApprovalByIDIsFoundThroughItsIndex(t *testing.T) {
	t.Parallel()
	_, pool := postgrestest.New(t)
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `INSERT INTO approvals (run_id, item_id, tenant_id, status, requested_seq, requested_at, approval_id)
SELECT 'run_' || g, 'itm_1', 'acme', 'resolved', 5, now() - g * interval '1 second', 'apr_' || g
FROM generate_series(1, 20000) g`); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, "ANALYZE approvals"); err != nil {
		t.Fatal(err)
	}
	sql, args, err := postgres.ListApprovalsQuery(postgres.ApprovalFilter{TenantID: "acme", ApprovalID: "apr_777"}, 51)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := pool.Query(ctx, "EXPLAIN "+sql, args...)
	if err != nil {
		t.Fatal(err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if plan := strings.Join(lines, "\n"); !strings.Contains(plan, "approvals_tenant_approval_id") {
		t.Fatalf("the lookup of an approval by id does not use its index:\n%s", plan)
	}
}
