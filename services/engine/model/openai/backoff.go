package openai

import (
	"context"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

const (
	// backoffBase is the first retry's nominal wait: long enough for a
	// momentary 429/503 to clear, short enough not to be noticed.
	backoffBase = 500 * time.Millisecond
	// backoffCap bounds one wait; past it, waiting longer rarely helps more
	// than failing and letting the run decide.
	backoffCap = 20 * time.Second
	// maxRetryAfter is the longest Retry-After honoured, as the official
	// OpenAI SDKs do; a longer one falls back to Backoff so one call never
	// sleeps for minutes.
	maxRetryAfter = time.Minute
)

// DefaultBackoff is exponential backoff with jitter: attempt n waits a random
// duration in [d/2, d] where d = 500ms·2^(n-1), capped at 20s.
func DefaultBackoff(attempt int) time.Duration {
	if attempt < 1 {
		attempt = 1
	}
	d := backoffCap
	if attempt <= 6 { // 500ms·2^6 = 32s is already past the cap
		d = min(backoffBase<<(attempt-1), backoffCap)
	}
	half := d / 2
	return half + rand.N(half+1) //nolint:gosec // jitter spreads retries; it needs no unpredictability
}

// retryAfter reads retry-after-ms (OpenAI) or Retry-After (seconds or an
// HTTP date). It returns 0 when absent, unparsable, or longer than a minute.
func retryAfter(h http.Header, now time.Time) time.Duration {
	var d time.Duration
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil {
			d = time.Duration(ms * float64(time.Millisecond))
		}
	} else if v := strings.TrimSpace(h.Get("Retry-After")); v != "" {
		if s, err := strconv.ParseFloat(v, 64); err == nil {
			d = time.Duration(s * float64(time.Second))
		} else if t, err := http.ParseTime(v); err == nil {
			d = t.Sub(now)
		}
	}
	if d <= 0 || d > maxRetryAfter {
		return 0
	}
	return d
}

// sleepCtx waits for d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
