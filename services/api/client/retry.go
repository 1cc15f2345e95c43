package client

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"
)

// RetryPolicy bounds the retries of a typed method's request. A request is
// retried when it failed with a network error or was answered 502, 503 or
// 504: the API answers 503 when Kafka or a read model is unavailable, and a
// proxy 502 or 504 when the API is restarting. A command is retried under
// the same Idempotency-Key, so a retry of a command that did reach the log
// is answered duplicate with the first attempt's outcome, never applied
// twice. Nothing else is retried: a 4xx answer stands.
type RetryPolicy struct {
	// MaxAttempts is how many times a request is sent at most. Default 5;
	// 1 sends it once.
	MaxAttempts int
	// MinDelay is the wait before the first retry; each next one doubles
	// it, up to MaxDelay, with full jitter. Default 100 ms.
	MinDelay time.Duration
	// MaxDelay caps one wait, including a Retry-After the server asks for
	// (a longer Retry-After is cut to it). Default 5 s.
	MaxDelay time.Duration
}

// The retry defaults: five attempts spread over about ten seconds ride out
// an API restart or a Kafka leader election, and still answer a caller
// within a typical request timeout.
const (
	defaultMaxAttempts = 5
	defaultMinDelay    = 100 * time.Millisecond
	defaultMaxDelay    = 5 * time.Second
)

func (p *RetryPolicy) setDefaults() {
	if p.MaxAttempts == 0 {
		p.MaxAttempts = defaultMaxAttempts
	}
	if p.MinDelay == 0 {
		p.MinDelay = defaultMinDelay
	}
	if p.MaxDelay == 0 {
		p.MaxDelay = defaultMaxDelay
	}
}

func (p RetryPolicy) validate() []error {
	var errs []error
	if p.MaxAttempts < 1 {
		errs = append(errs, fmt.Errorf("client: Retry.MaxAttempts %d is below 1", p.MaxAttempts))
	}
	if p.MinDelay < 0 || p.MaxDelay < p.MinDelay {
		errs = append(errs, fmt.Errorf("client: Retry delays %s..%s are not a range", p.MinDelay, p.MaxDelay))
	}
	return errs
}

// delay is the wait before retry n (1 for the first), or the server's
// Retry-After when it names one, capped at MaxDelay.
func (p RetryPolicy) delay(n int, retryAfter time.Duration) time.Duration {
	if retryAfter > 0 {
		return min(retryAfter, p.MaxDelay)
	}
	ceiling := p.MinDelay << min(n-1, 20)
	if ceiling <= 0 || ceiling > p.MaxDelay {
		ceiling = p.MaxDelay
	}
	return p.MinDelay/2 + rand.N(ceiling-p.MinDelay/2+1) //nolint:gosec // jitter, not a secret
}

// retryable reports whether an answer with this status may succeed when sent again.
func retryable(status int) bool {
	return status == http.StatusBadGateway || status == http.StatusServiceUnavailable || status == http.StatusGatewayTimeout
}

// retryAfter reads a Retry-After header: seconds or an HTTP date; 0 when
// absent or unreadable.
func retryAfter(h http.Header) time.Duration {
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}

// send sends a request as call does, retrying a network error or a
// retryable answer as c's RetryPolicy says. The body is encoded once and
// sent again as the same bytes. The last answer (a retryable status
// included) or the last network error is returned; ctx ending stops the
// retries at once.
func (c *Client) send(ctx context.Context, method, path string, body any, hdr ...string) (*http.Response, error) {
	raw, err := encodeBody(method, path, body)
	if err != nil {
		return nil, err
	}
	var payload any
	if raw != nil {
		payload = raw
	}
	p := c.cfg.Retry
	for attempt := 1; ; attempt++ {
		resp, err := c.Send(ctx, method, path, payload, hdr...)
		last := attempt >= p.MaxAttempts
		var wait time.Duration
		switch {
		case err != nil && (ctx.Err() != nil || last):
			return nil, err
		case err != nil:
			wait = p.delay(attempt, 0)
		case !retryable(resp.StatusCode) || last:
			return resp, nil
		default:
			wait = p.delay(attempt, retryAfter(resp.Header))
			drain(resp)
		}
		if err := sleep(ctx, wait); err != nil {
			return nil, fmt.Errorf("%s %s: %w", method, path, err)
		}
	}
}

// drain reads a little of a body that is not used and closes it, so its
// connection can be reused.
func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxProblemBytes))
	_ = resp.Body.Close()
}

// sleep waits d, or until ctx ends (its error).
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
