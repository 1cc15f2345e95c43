package contracttests

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/services/api/client"
)

// Target is a running xbot API that the conformance suites (APIConformance,
// RuntimeClientConformance) check from outside, through its HTTP API only.
// The suites need the agents of ConformanceAgentsYAML configured on it
// (agents_file), besides the built-in demo agent; every run they create is
// in sessions and under keys of their own (a random prefix), so they may run
// against a live deployment, again and again.
type Target struct {
	// BaseURL is the API's base URL, e.g. http://127.0.0.1:8080. Required.
	BaseURL string
	// Token is a bearer token with scope full. Required.
	Token string
	// OtherToken is a token of another tenant, for the tenant checks;
	// empty: they are not applicable.
	OtherToken string
	// HTTP sends the requests; default a client without a timeout (streams
	// are long), bounded by each check's context.
	HTTP *http.Client
	// CheckTimeout bounds one check. Default 3 minutes.
	CheckTimeout time.Duration
}

// ErrNotApplicable marks a check that does not apply to the target (a
// capability it does not declare, a token it was not given): reported as
// such, never as passed, and not a failure.
var ErrNotApplicable = errors.New("not applicable")

func notApplicable(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrNotApplicable}, args...)...)
}

// Check is one named check of a conformance suite. Run returns nil when the
// target passes, an error wrapping ErrNotApplicable when the check does not
// apply, and otherwise every problem it found. However the check fares,
// RunTests and Run fail it when an error answer one of its requests got
// was no RFC 9457 problem with a code of the error registry (audit.go).
type Check struct {
	Name string
	Run  func(ctx context.Context) error
}

// defaultCheckTimeout bounds one check: the slowest (every intent in every
// state, a pause expiring) take tens of seconds on a loaded machine.
const defaultCheckTimeout = 3 * time.Minute

func (t *Target) setDefaults() {
	if t.HTTP == nil {
		t.HTTP = &http.Client{}
	}
	t.HTTP = audited(t.HTTP)
	if t.CheckTimeout == 0 {
		t.CheckTimeout = defaultCheckTimeout
	}
}

// api is a client of the target with tok.
func (t Target) api(tok string) (*client.Client, error) {
	return client.New(client.Config{BaseURL: t.BaseURL, Token: tok, HTTP: t.HTTP})
}

// Suite is a conformance suite: its checks of one target.
type Suite struct {
	Name   string
	Checks []Check
	// Sequential runs the checks one after the other (they share fixtures
	// or sandboxes); otherwise they run in parallel.
	Sequential bool
	// Timeout bounds one check.
	Timeout time.Duration
	// Cleanup, when set, runs once after every check ended, whatever their
	// results: it stops what the checks left going on the target.
	Cleanup func()
}

// RunTests runs the suite's checks as subtests of t: a failure fails the
// subtest, a check that does not apply skips it.
func (s Suite) RunTests(t *testing.T) {
	t.Helper()
	if s.Cleanup != nil {
		t.Cleanup(s.Cleanup) // after the subtests, parallel ones included
	}
	for _, c := range s.Checks {
		t.Run(c.Name, func(t *testing.T) {
			if !s.Sequential {
				t.Parallel()
			}
			ctx, cancel := context.WithTimeout(t.Context(), s.Timeout)
			defer cancel()
			switch err := runAudited(ctx, c); {
			case errors.Is(err, ErrNotApplicable):
				t.Skip(err)
			case err != nil:
				t.Error(err)
			}
		})
	}
}

// Result is the result of one check.
type Result struct {
	Suite, Name string
	Err         error
	Took        time.Duration
}

// Status is PASS, FAIL or N/A.
func (r Result) Status() string {
	switch {
	case r.Err == nil:
		return "PASS"
	case errors.Is(r.Err, ErrNotApplicable):
		return "N/A"
	}
	return "FAIL"
}

// Run runs the suite's checks and writes one line per check to w as it
// finishes: its status, suite, name and time, and for a failure or a check
// that does not apply, why. It returns the results in the checks' order.
func (s Suite) Run(ctx context.Context, w io.Writer) []Result {
	out := make([]Result, len(s.Checks))
	var mu sync.Mutex
	var wg sync.WaitGroup
	one := func(i int, c Check) {
		cctx, cancel := context.WithTimeout(ctx, s.Timeout)
		defer cancel()
		start := time.Now()
		r := Result{Suite: s.Name, Name: c.Name, Err: runAudited(cctx, c), Took: time.Since(start).Round(time.Millisecond)}
		mu.Lock()
		defer mu.Unlock()
		out[i] = r
		_, _ = fmt.Fprintf(w, "%-4s %s/%s (%s)\n", r.Status(), s.Name, c.Name, r.Took)
		if r.Err != nil {
			_, _ = fmt.Fprintf(w, "     %s\n", strings.ReplaceAll(r.Err.Error(), "\n", "\n     "))
		}
	}
	for i, c := range s.Checks {
		if s.Sequential {
			one(i, c)
			continue
		}
		wg.Go(func() { one(i, c) })
	}
	wg.Wait()
	if s.Cleanup != nil {
		s.Cleanup()
	}
	return out
}

// nonce is a fresh random prefix for the ids and keys of one check.
func freshID(prefix string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return prefix + "-" + hex.EncodeToString(b[:])
}
