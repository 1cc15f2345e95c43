package contracttests

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/xbot-runtime/xbot/services/api/client"
)

// problemAudit holds what one check's requests found wrong with the error
// answers they got: every 4xx, and every 5xx that says it is a problem,
// must be an RFC 9457 problem whose status is the answer's and whose code
// is in the error registry (schemas/v1/errors.json). It covers every
// request of the suites, not only the bad requests EveryErrorHasARegisteredCode
// sends on purpose.
type problemAudit struct {
	mu   sync.Mutex
	errs []error
}

type auditKey struct{}

// withAudit returns ctx with a fresh audit its requests report to.
func withAudit(ctx context.Context) (context.Context, *problemAudit) {
	a := &problemAudit{}
	return context.WithValue(ctx, auditKey{}, a), a
}

// err is every problem found, or nil.
func (a *problemAudit) err() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.errs) == 0 {
		return nil
	}
	return fmt.Errorf("error answers that are no registered problem: %w", errors.Join(a.errs...))
}

func (a *problemAudit) add(err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.errs) < maxAuditErrors {
		a.errs = append(a.errs, err)
	}
}

// maxAuditErrors bounds the errors one check's audit keeps: the first few
// say what is wrong.
const maxAuditErrors = 10

// auditTransport reports the error answers of requests whose context
// carries an audit (withAudit) to it.
type auditTransport struct{ next http.RoundTripper }

func (t auditTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	a, _ := req.Context().Value(auditKey{}).(*problemAudit)
	if err != nil || a == nil || resp.StatusCode < 400 {
		return resp, err
	}
	isProblem := strings.HasPrefix(resp.Header.Get("Content-Type"), "application/problem+json")
	if resp.StatusCode >= 500 && !isProblem {
		return resp, nil // a proxy's page in front of the API, say: retried, not the API's answer
	}
	body, rerr := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	what := req.Method + " " + req.URL.Path
	var p client.Problem
	switch {
	case rerr != nil:
		a.add(fmt.Errorf("%s: HTTP %d: reading the answer: %w", what, resp.StatusCode, rerr))
	case !isProblem:
		a.add(fmt.Errorf("%s: HTTP %d with Content-Type %q, want application/problem+json", what, resp.StatusCode, resp.Header.Get("Content-Type")))
	case json.Unmarshal(body, &p) != nil || p.Status != resp.StatusCode:
		a.add(fmt.Errorf("%s: HTTP %d with a problem whose status is %d: %s", what, resp.StatusCode, p.Status, clip(body)))
	default:
		if _, ok := client.Lookup(p.Code); !ok {
			a.add(fmt.Errorf("%s: HTTP %d with code %q, not in the error registry: %s", what, resp.StatusCode, p.Code, clip(body)))
		}
	}
	return resp, nil
}

// audited is hc with its transport wrapped in an auditTransport; hc itself
// is not changed.
func audited(hc *http.Client) *http.Client {
	out := *hc
	next := hc.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	out.Transport = auditTransport{next: next}
	return &out
}

// runAudited runs a check with an audit of its requests: a check that
// passes, or does not apply, fails when an error answer it got was no
// registered problem.
func runAudited(ctx context.Context, c Check) error {
	ctx, a := withAudit(ctx)
	err := c.Run(ctx)
	if aerr := a.err(); aerr != nil {
		if err == nil || errors.Is(err, ErrNotApplicable) {
			return aerr
		}
		return errors.Join(err, aerr)
	}
	return err
}
