// Package sharedsrv is the machinery behind pgtest and chtest: one server per
// test binary, started on first use and stopped when TestMain's run ends,
// with a fresh database per test.
package sharedsrv

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Timeouts for test plumbing; generous so a loaded CI machine does not flake.
const (
	startTimeout = time.Minute
	stopTimeout  = 30 * time.Second
	// CleanupTimeout bounds creating or dropping a test's database.
	CleanupTimeout = 30 * time.Second
)

// Runner is what Run runs: a *testing.M, or another harness's Run wrapping
// one, so several harnesses nest in one TestMain.
type Runner interface{ Run() int }

// Server is a started server.
type Server interface {
	Stop(ctx context.Context) error
}

// Harness holds one test binary's shared server of type S.
type Harness[S Server] struct {
	// Name prefixes messages and the data directory ("pgtest").
	Name string
	// Main is the TestMain call to name when it is missing ("pgtest.Main(m)").
	Main string
	// Start starts the server in dir.
	Start func(ctx context.Context, dir string) (S, error)
	// StartTimeout bounds Start. Default one minute.
	StartTimeout time.Duration
	// Skip, when set, says a start error skips the test instead of failing
	// it; SkipHint is appended to the skip message.
	Skip     func(error) bool
	SkipHint string

	inMain atomic.Bool // set while Run is running the tests
	once   sync.Once
	srv    S
	dir    string
	err    error
	seq    atomic.Int64
}

// Run runs the tests, stops the server if one was started, removes its
// directory, and returns the exit code for os.Exit.
func (h *Harness[S]) Run(m Runner) int {
	h.inMain.Store(true)
	code := m.Run()
	h.inMain.Store(false)
	if err := h.stop(); err != nil {
		fmt.Fprintln(os.Stderr, h.Name+":", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

func (h *Harness[S]) stop() error {
	if h.dir == "" {
		return nil
	}
	if h.err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
		defer cancel()
		if err := h.srv.Stop(ctx); err != nil {
			return fmt.Errorf("stop shared server: %w", err)
		}
	}
	if err := os.RemoveAll(h.dir); err != nil {
		return fmt.Errorf("remove shared server dir: %w", err)
	}
	return nil
}

// Shared returns the server, starting it on first use. It fails tb (or
// skips it, per Skip) if the server cannot start, and fails it if TestMain
// does not run the tests through Run.
func (h *Harness[S]) Shared(tb testing.TB) S {
	tb.Helper()
	if !h.inMain.Load() {
		tb.Fatalf("%s: call %s (or Run) from TestMain so the shared server is stopped", h.Name, h.Main)
	}
	h.once.Do(h.start)
	if h.err != nil && h.Skip != nil && h.Skip(h.err) {
		tb.Skip(h.err.Error() + h.SkipHint)
	}
	if h.err != nil {
		tb.Fatal(h.err)
	}
	return h.srv
}

func (h *Harness[S]) start() {
	dir, err := os.MkdirTemp("", h.Name+"-")
	if err != nil {
		h.err = fmt.Errorf("%s: create data dir: %w", h.Name, err)
		return
	}
	h.dir = dir
	timeout := h.StartTimeout
	if timeout == 0 {
		timeout = startTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if h.srv, h.err = h.Start(ctx, dir); h.err != nil {
		h.err = fmt.Errorf("%s: %w", h.Name, h.err)
	}
}

// DatabaseName returns a name unique in the test binary for tb's database:
// "t_<test name>_<seq>" within 63 bytes, keeping the unique suffix when the
// test name is long.
func (h *Harness[S]) DatabaseName(tb testing.TB) string {
	suffix := fmt.Sprintf("_%d", h.seq.Add(1))
	var b strings.Builder
	for _, r := range strings.ToLower(tb.Name()) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	base := "t_" + b.String()
	return base[:min(len(base), 63-len(suffix))] + suffix
}

// Wrap returns a Runner that runs m inside this harness.
func (h *Harness[S]) Wrap(m Runner) Runner { return wrapped[S]{h, m} }

type wrapped[S Server] struct {
	h *Harness[S]
	m Runner
}

func (w wrapped[S]) Run() int { return w.h.Run(w.m) }

// CheckDatabases is the test every harness's NewDatabase passes: two tests
// (named with characters a database name cannot hold) get two databases,
// and neither is left on the server after its test. current creates a
// database for t, checks that a connection to it lands in it, and returns
// its name; left reports whether a database of that name is on the server.
func CheckDatabases(t *testing.T, current func(t *testing.T) string, left func(t *testing.T, name string) bool) {
	t.Helper()
	var names []string
	for range 2 {
		t.Run("sub/with odd-name", func(t *testing.T) { names = append(names, current(t)) })
	}
	if len(names) != 2 || names[0] == names[1] {
		t.Fatalf("two tests got databases %v, want two", names)
	}
	for _, name := range names {
		if left(t, name) {
			t.Errorf("database %s left after its test", name)
		}
	}
}
