//go:build chaos

package systemtest_test

import (
	"context"
	"maps"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/infra/devstack/pgtest"
	pginfra "github.com/xbot-runtime/xbot/infra/postgres"
	pgview "github.com/xbot-runtime/xbot/projections/postgres"
	"github.com/xbot-runtime/xbot/projections/runner"
)

// renamed runs a view under another projector name, so it has its own
// consumer group and can be rebuilt while the live projector runs.
type renamed struct {
	runner.Projector
	name string
}

func (r renamed) Name() string { return r.name }

// checkRebuild rebuilds the Postgres read models from offset zero into a
// fresh database and compares them with the live ones.
func (c *chaos) checkRebuild(ctx context.Context) {
	c.t.Helper()
	live, err := c.front.Store.Checksums(ctx)
	if err != nil {
		c.t.Fatal(err)
	}
	pool, err := pginfra.Connect(ctx, pgtest.NewDatabase(c.t))
	if err != nil {
		c.t.Fatal(err)
	}
	defer pool.Close()
	if err := pginfra.Migrate(ctx, pool, "projection_postgres", pgview.Migrations); err != nil {
		c.t.Fatal(err)
	}
	store := pgview.New(pool, zap.NewNop(), pgview.WithEventsTopic(c.kcfg.WithDefaults().EventsTopic()))
	// What is checked is that the rebuild ends equal, not how fast: one of
	// the 100 k-event history took over 45 s beside another suite. The
	// caller's deadline bounds it.
	if err := runner.Rebuild(ctx, runner.Config{Kafka: c.kcfg, Projector: renamed{store, "postgres-verify"},
		Logger: zap.NewNop()}, true, nil); err != nil {
		c.t.Fatalf("rebuild: %v", err)
	}
	rebuilt, err := store.Checksums(ctx)
	if err != nil {
		c.t.Fatal(err)
	}
	if !maps.Equal(live, rebuilt) {
		c.t.Errorf("the rebuilt view differs from the live one:\nlive    %v\nrebuilt %v", live, rebuilt)
	}
}
