package pgtest

import (
	"context"
	"os"
	"testing"

	"github.com/xbot-runtime/xbot/infra/devstack"
	"github.com/xbot-runtime/xbot/infra/devstack/internal/sharedsrv"
)

// harness is the server of this test binary.
var harness = &sharedsrv.Harness[*devstack.Postgres]{
	Name: "pgtest", Main: "pgtest.Main(m)",
	Start: func(ctx context.Context, dir string) (*devstack.Postgres, error) {
		return devstack.StartPostgres(ctx, devstack.PostgresConfig{Dir: dir})
	},
}

// Main runs the tests, stops the shared server, removes its directory and
// exits with the tests' status. Call it from TestMain.
func Main(m *testing.M) { os.Exit(Run(m)) }

// Runner is what Run runs: a *testing.M, or another harness's Run wrapping
// one (e.g. pgtest.Run(chtest.Wrap(m)) starts both servers on demand).
type Runner = sharedsrv.Runner

// Run is Main without os.Exit, for a TestMain that does more work: it runs
// the tests, stops the shared server if one was started, removes its
// directory, and returns the exit code for os.Exit.
func Run(m Runner) int { return harness.Run(m) }

// Wrap returns a Runner that runs m inside this harness, for nesting
// harnesses in one TestMain.
func Wrap(m Runner) Runner { return harness.Wrap(m) }

// Shared returns the server of this test binary, starting it on first use.
// It fails tb if the server cannot start (for example, PostgreSQL is not
// installed) or if the package's TestMain does not call Main or Run.
func Shared(tb testing.TB) *devstack.Postgres {
	tb.Helper()
	return harness.Shared(tb)
}

// NewDatabase creates a database for tb alone on the shared server and
// returns its DSN. The database is dropped (sessions disconnected) when tb
// ends.
func NewDatabase(tb testing.TB) string {
	tb.Helper()
	pg := Shared(tb)
	name := harness.DatabaseName(tb)
	ctx, cancel := context.WithTimeout(context.Background(), sharedsrv.CleanupTimeout)
	defer cancel()
	dsn, err := pg.CreateDatabase(ctx, name)
	if err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), sharedsrv.CleanupTimeout)
		defer cancel()
		if err := pg.DropDatabase(ctx, name); err != nil {
			tb.Errorf("pgtest: %v", err)
		}
	})
	return dsn
}
