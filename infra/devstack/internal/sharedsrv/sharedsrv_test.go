package sharedsrv_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/xbot-runtime/xbot/infra/devstack/internal/sharedsrv"
)

// fakeServer counts its starts and stops.
type fakeServer struct{ stops *atomic.Int32 }

func (s *fakeServer) Stop(context.Context) error {
	s.stops.Add(1)
	return nil
}

// harness is a Harness of fake servers that counts starts and stops and
// remembers its data directory.
type harness struct {
	*sharedsrv.Harness[*fakeServer]
	starts, stops atomic.Int32
	dir           string
}

func newHarness(startErr error) *harness {
	h := &harness{}
	h.Harness = &sharedsrv.Harness[*fakeServer]{Name: "fake", Main: "fake.Main(m)",
		Start: func(_ context.Context, dir string) (*fakeServer, error) {
			h.starts.Add(1)
			h.dir = dir
			return &fakeServer{stops: &h.stops}, startErr
		}}
	return h
}

// runner is a sharedsrv.Runner running fn as the tests of a binary.
type runner func() int

func (r runner) Run() int { return r() }

// TestSharedStartsOneServer is what pgtest, chtest and kafkatest rely on:
// every Shared of one binary gets the same server, started once, and Run
// stops it and removes its directory when the tests end.
func TestSharedStartsOneServer(t *testing.T) {
	t.Parallel()
	h := newHarness(nil)
	var first, second *fakeServer
	code := h.Run(runner(func() int {
		first, second = h.Shared(t), h.Shared(t)
		return 0
	}))
	switch {
	case code != 0 || first == nil || first != second:
		t.Fatalf("Run = %d; Shared returned %p and %p, want one server", code, first, second)
	case h.starts.Load() != 1 || h.stops.Load() != 1:
		t.Fatalf("%d starts and %d stops, want one of each", h.starts.Load(), h.stops.Load())
	}
	if _, err := os.Stat(h.dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the server's directory %s is left after Run: %v", h.dir, err)
	}
}

func TestRunWithoutAServerStopsNothing(t *testing.T) {
	t.Parallel()
	h := newHarness(nil)
	if code := h.Run(runner(func() int { return 3 })); code != 3 || h.starts.Load() != 0 || h.stops.Load() != 0 {
		t.Errorf("Run = %d with %d starts, %d stops; want the tests' code and no server", code, h.starts.Load(), h.stops.Load())
	}
}

// failTB records how a test ended instead of ending it, and stops the
// goroutine at Fatal or Skip, as testing.T does.
type failTB struct {
	*testing.T
	fatal, skip string
}

func (f *failTB) Helper() {}

func (f *failTB) Fatalf(format string, args ...any) {
	f.fatal = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func (f *failTB) Fatal(args ...any) {
	f.fatal = fmt.Sprint(args...)
	runtime.Goexit()
}

func (f *failTB) Skip(args ...any) {
	f.skip = fmt.Sprint(args...)
	runtime.Goexit()
}

// outcome runs Shared on a failTB in a goroutine of its own.
func outcome(t *testing.T, h *harness) *failTB {
	tb := &failTB{T: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.Shared(tb)
	}()
	<-done
	return tb
}

func TestSharedOutsideRunFailsNamingMain(t *testing.T) {
	t.Parallel()
	h := newHarness(nil)
	if tb := outcome(t, h); !strings.Contains(tb.fatal, "fake.Main(m)") || h.starts.Load() != 0 {
		t.Errorf("Shared outside Run: fatal %q after %d starts, want a failure naming the TestMain call", tb.fatal, h.starts.Load())
	}
}

func TestStartErrorFailsOrSkips(t *testing.T) {
	t.Parallel()
	for _, skip := range []bool{false, true} {
		h := newHarness(errors.New("no server here"))
		h.Skip = func(error) bool { return skip }
		var tb *failTB
		h.Run(runner(func() int {
			tb = outcome(t, h)
			return 0
		}))
		if msg := tb.skip + tb.fatal; (tb.skip != "") != skip || (tb.fatal != "") == skip || !strings.Contains(msg, "no server here") {
			t.Errorf("Skip says %v: skipped %q, failed %q", skip, tb.skip, tb.fatal)
		}
	}
}

func TestDatabaseNameIsUniqueAndShort(t *testing.T) {
	t.Parallel()
	h := newHarness(nil)
	long := strings.Repeat("Very Long Name/", 10)
	t.Run(long, func(t *testing.T) {
		a, b := h.DatabaseName(t), h.DatabaseName(t)
		if a == b || len(a) > 63 || !strings.HasPrefix(a, "t_testdatabasenameisuniqueandshort_very_long_name_") {
			t.Errorf("DatabaseName = %q, %q; want two distinct names within 63 bytes", a, b)
		}
		for _, r := range a {
			if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '_' {
				t.Errorf("DatabaseName %q holds %q", a, r)
			}
		}
	})
}
