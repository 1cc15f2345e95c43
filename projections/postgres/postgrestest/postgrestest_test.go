package postgrestest_test

import (
	"context"
	"testing"

	"github.com/xbot-runtime/xbot/infra/devstack/pgtest"
	"github.com/xbot-runtime/xbot/projections/postgres/postgrestest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestNewIsMigratedAndTheTestsOwn(t *testing.T) {
	t.Parallel()
	store, pool := postgrestest.New(t)
	_, other := postgrestest.New(t)
	var mine, theirs string
	if err := pool.QueryRow(context.Background(), "SELECT current_database()").Scan(&mine); err != nil {
		t.Fatal(err)
	}
	if err := other.QueryRow(context.Background(), "SELECT current_database()").Scan(&theirs); err != nil {
		t.Fatal(err)
	}
	if mine == theirs {
		t.Fatalf("two calls share database %s", mine)
	}
	if _, err := store.Checksums(context.Background()); err != nil {
		t.Fatalf("the read models are not migrated: %v", err)
	}
}
