package chtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/infra/clickhouse"
	"github.com/xbot-runtime/xbot/infra/devstack"
)

// shared is the server of this test binary.
var shared struct {
	inMain atomic.Bool // set while Run is running the tests
	once   sync.Once
	ch     *devstack.ClickHouse
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
		fmt.Fprintln(os.Stderr, "chtest:", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// stopShared stops the server and removes its directory, if started.
func stopShared() error {
	if shared.ch != nil {
		ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
		defer cancel()
		if err := shared.ch.Stop(ctx); err != nil {
			return fmt.Errorf("stop shared clickhouse: %w", err)
		}
	}
	if shared.dir != "" {
		if err := os.RemoveAll(shared.dir); err != nil {
			return fmt.Errorf("remove shared clickhouse dir: %w", err)
		}
	}
	return nil
}

// Shared returns the server of this test binary, starting it on first use.
// It skips tb when the ClickHouse binary is missing and CI is not set, and
// fails tb if the server cannot start otherwise or if the package's TestMain
// does not call Main or Run.
func Shared(tb testing.TB) *devstack.ClickHouse {
	tb.Helper()
	if !shared.inMain.Load() {
		tb.Fatal("chtest: call chtest.Main(m) (or chtest.Run) from TestMain so the shared server is stopped")
	}
	shared.once.Do(startShared)
	if errors.Is(shared.err, devstack.ErrClickHouseMissing) && !inCI() {
		tb.Skip(shared.err.Error() + " (set CI=true to fail instead)")
	}
	if shared.err != nil {
		tb.Fatal(shared.err)
	}
	return shared.ch
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

func startShared() {
	dir, err := os.MkdirTemp("", "chtest-")
	if err != nil {
		shared.err = fmt.Errorf("chtest: create data dir: %w", err)
		return
	}
	shared.dir = dir
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	shared.ch, shared.err = devstack.StartClickHouse(ctx, devstack.ClickHouseConfig{Dir: dir})
	if shared.err != nil {
		shared.err = fmt.Errorf("chtest: %w", shared.err)
	}
}

// NewDatabase creates a database for tb alone on the shared server and
// returns the configuration to connect to it. The database is dropped with
// its tables when tb ends.
func NewDatabase(tb testing.TB) clickhouse.Config {
	tb.Helper()
	srv := Shared(tb)
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	db, err := srv.CreateDatabase(ctx, databaseName(tb.Name(), dbSeq.Add(1)))
	if err != nil {
		tb.Fatalf("chtest: %v", err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
		defer cancel()
		if err := srv.DropDatabase(ctx, db); err != nil {
			tb.Errorf("chtest: %v", err)
		}
	})
	return clickhouse.Config{Addr: srv.Addr(), Database: db}
}

// databaseName builds "t_<test name>_<seq>" within 63 bytes, keeping the
// unique suffix when the test name is long.
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
