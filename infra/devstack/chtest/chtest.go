package chtest

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/xbot-runtime/xbot/infra/clickhouse"
	"github.com/xbot-runtime/xbot/infra/devstack"
	"github.com/xbot-runtime/xbot/infra/devstack/internal/sharedsrv"
)

// harness is the server of this test binary.
var harness = &sharedsrv.Harness[*devstack.ClickHouse]{
	Name: "chtest", Main: "chtest.Main(m)",
	Start: func(ctx context.Context, dir string) (*devstack.ClickHouse, error) {
		return devstack.StartClickHouse(ctx, devstack.ClickHouseConfig{Dir: dir})
	},
	// A missing binary skips the test, unless CI is set: CI never passes by skipping.
	Skip:     func(err error) bool { return errors.Is(err, devstack.ErrClickHouseMissing) && !inCI() },
	SkipHint: " (set CI=true to fail instead)",
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
// It skips tb when the ClickHouse binary is missing and CI is not set, and
// fails tb if the server cannot start otherwise or if the package's TestMain
// does not call Main or Run.
func Shared(tb testing.TB) *devstack.ClickHouse {
	tb.Helper()
	return harness.Shared(tb)
}

// inCI reports whether the CI environment variable is set to a true value.
func inCI() bool {
	v := strings.TrimSpace(os.Getenv("CI"))
	if v == "" {
		return false
	}
	b, err := strconv.ParseBool(v)
	return err != nil || b // an unparsable value ("yes") counts as set
}

// NewDatabase creates a database for tb alone on the shared server and
// returns the configuration to connect to it. The database is dropped with
// its tables when tb ends.
func NewDatabase(tb testing.TB) clickhouse.Config {
	tb.Helper()
	srv := Shared(tb)
	ctx, cancel := context.WithTimeout(context.Background(), sharedsrv.CleanupTimeout)
	defer cancel()
	db, err := srv.CreateDatabase(ctx, harness.DatabaseName(tb))
	if err != nil {
		tb.Fatalf("chtest: %v", err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), sharedsrv.CleanupTimeout)
		defer cancel()
		if err := srv.DropDatabase(ctx, db); err != nil {
			tb.Errorf("chtest: %v", err)
		}
	})
	return clickhouse.Config{Addr: srv.Addr(), Database: db, Password: srv.Password()}
}
