package pgtest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/infra/devstack"
)

// shared is the server of this test binary.
var shared struct {
	inMain atomic.Bool // set while Run is running the tests
	once   sync.Once
	pg     *devstack.Postgres
	dir    string
	err    error
}

// dbSeq makes database names unique within the test binary.
var dbSeq atomic.Int64

// Timeouts for test plumbing; generous so a loaded CI machine does not flake.
const (
	startTimeout   = time.Minute
	stopTimeout    = 30 * time.Second
	cleanupTimeout = 30 * time.Second
)

// Main runs the tests, stops the shared server, removes its directory and
// exits with the tests' status. Call it from TestMain.
func Main(m *testing.M) { os.Exit(Run(m)) }

// Runner is what Run runs: a *testing.M, or another harness's Run wrapping
// one (e.g. pgtest.Run(chtest.Wrap(m)) starts both servers on demand).
type Runner interface{ Run() int }

// Run is Main without os.Exit, for a TestMain that does more work: it runs
// the tests, stops the shared server if one was started, removes its
// directory, and returns the exit code for os.Exit.
func Run(m Runner) int {
	shared.inMain.Store(true)
	code := m.Run()
	shared.inMain.Store(false)
	if err := stopShared(); err != nil {
		fmt.Fprintln(os.Stderr, "pgtest:", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// stopShared stops the server and removes its directory, if started.
func stopShared() error {
	if shared.pg != nil {
		ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
		defer cancel()
		if err := shared.pg.Stop(ctx); err != nil {
			return fmt.Errorf("stop shared postgres: %w", err)
		}
	}
	if shared.dir != "" {
		if err := os.RemoveAll(shared.dir); err != nil {
			return fmt.Errorf("remove shared postgres dir: %w", err)
		}
	}
	return nil
}

// Shared returns the server of this test binary, starting it on first use.
// It fails tb if the server cannot start (for example, PostgreSQL is not
// installed) or if the package's TestMain does not call Main or Run.
func Shared(tb testing.TB) *devstack.Postgres {
	tb.Helper()
	if !shared.inMain.Load() {
		tb.Fatal("pgtest: call pgtest.Main(m) (or pgtest.Run) from TestMain so the shared server is stopped")
	}
	shared.once.Do(startShared)
	if shared.err != nil {
		tb.Fatal(shared.err)
	}
	return shared.pg
}

func startShared() {
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		shared.err = fmt.Errorf("pgtest: create data dir: %w", err)
		return
	}
	shared.dir = dir
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	shared.pg, shared.err = devstack.StartPostgres(ctx, devstack.PostgresConfig{Dir: dir})
	if shared.err != nil {
		shared.err = fmt.Errorf("pgtest: %w", shared.err)
	}
}

// NewDatabase creates a database for tb alone on the shared server and
// returns its DSN. The database is dropped (sessions disconnected) when tb
// ends.
func NewDatabase(tb testing.TB) string {
	tb.Helper()
	pg := Shared(tb)
	name := databaseName(tb.Name(), dbSeq.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	dsn, err := pg.CreateDatabase(ctx, name)
	if err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
		defer cancel()
		if err := pg.DropDatabase(ctx, name); err != nil {
			tb.Errorf("pgtest: %v", err)
		}
	})
	return dsn
}

// databaseName builds "t_<test name>_<seq>" within PostgreSQL's 63 bytes,
// keeping the unique suffix when the test name is long.
func databaseName(test string, seq int64) string {
	suffix := fmt.Sprintf("_%d", seq)
	var b strings.Builder
	for _, r := range strings.ToLower(test) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	base := "t_" + b.String()
	return base[:min(len(base), 63-len(suffix))] + suffix
}

// Wrap returns a Runner that runs m inside this harness, for nesting
// harnesses in one TestMain.
func Wrap(m Runner) Runner { return wrapped{m} }

type wrapped struct{ m Runner }

func (w wrapped) Run() int { return Run(w.m) }
