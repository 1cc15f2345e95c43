package client_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/services/api/client"
)

// attempt is one request a flaky server saw.
type attempt struct{ key, body string }

// flakyAPI answers the first len(fails) requests with fails[i] (0 drops the
// connection without an answer) and the rest with 202 answer.
func flakyAPI(t *testing.T, answer string, fails ...int) (*client.Client, func() []attempt) {
	t.Helper()
	var mu sync.Mutex
	var seen []attempt
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		mu.Lock()
		n := len(seen)
		seen = append(seen, attempt{r.Header.Get("Idempotency-Key"), string(raw)})
		mu.Unlock()
		switch {
		case n >= len(fails):
			w.WriteHeader(http.StatusAccepted)
			_, _ = io.WriteString(w, answer)
		case fails[n] == 0:
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				_ = conn.Close()
			}
		default:
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(fails[n])
			_, _ = io.WriteString(w, `{"status":503,"title":"Service Unavailable","code":"unavailable","detail":"retry"}`)
		}
	}))
	t.Cleanup(srv.Close)
	c, err := client.New(client.Config{BaseURL: srv.URL, Token: "tok",
		Retry: client.RetryPolicy{MaxAttempts: 4, MinDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	return c, func() []attempt {
		mu.Lock()
		defer mu.Unlock()
		return append([]attempt(nil), seen...)
	}
}

const acceptedAnswer = `{"runId":"run_1","commandId":"cmd_1","outcome":"accepted"}`

// TestARetriedCommandKeepsItsKey: a 503, a dropped connection and a 502 are
// sent again, each time under the same Idempotency-Key (the one the client
// generated) and with the same body.
func TestARetriedCommandKeepsItsKey(t *testing.T) {
	t.Parallel()
	c, seen := flakyAPI(t, acceptedAnswer, 503, 0, 502)
	res, err := c.CreateRun(context.Background(), client.CreateRunRequest{AgentID: "demo", Input: client.UserInput{Content: "hi"}},
		client.CommandOptions{})
	if err != nil || res.Outcome != client.OutcomeAccepted {
		t.Fatalf("CreateRun = %+v, %v", res, err)
	}
	got := seen()
	if len(got) != 4 {
		t.Fatalf("%d attempts, want 4", len(got))
	}
	for i, a := range got {
		if a.key != res.IdempotencyKey || !generatedKey.MatchString(a.key) || a.body != got[0].body || a.body == "" {
			t.Errorf("attempt %d: key %q body %q; want key %q and the first body %q", i, a.key, a.body, res.IdempotencyKey, got[0].body)
		}
	}
}

// TestRetriesAreBounded: an API that stays unavailable is asked
// MaxAttempts times; the last answer is the error, a *Problem that matches
// ErrUnavailable.
func TestRetriesAreBounded(t *testing.T) {
	t.Parallel()
	c, seen := flakyAPI(t, acceptedAnswer, 503, 503, 503, 503, 503, 503)
	_, err := c.CancelRun(context.Background(), "run_1", "", client.CommandOptions{IdempotencyKey: "mine"})
	var p *client.Problem
	if !errors.Is(err, client.ErrUnavailable) || !errors.As(err, &p) || p.Status != 503 || p.Detail != "retry" {
		t.Fatalf("error %v, want the 503 problem", err)
	}
	if got := seen(); len(got) != 4 || got[3].key != "mine" {
		t.Fatalf("attempts %+v, want 4 under key mine", got)
	}
}

// TestAnAnswerThatStandsIsNotRetried: a 4xx is the answer.
func TestAnAnswerThatStandsIsNotRetried(t *testing.T) {
	t.Parallel()
	c, seen := flakyAPI(t, acceptedAnswer, 409, 409)
	if _, err := c.GetRun(context.Background(), "run_1"); err == nil {
		t.Fatal("a 409 read succeeded")
	}
	if n := len(seen()); n != 1 {
		t.Fatalf("%d attempts, want 1", n)
	}
}

// TestRetriesStopWhenTheContextEnds: no retry outlives the caller.
func TestRetriesStopWhenTheContextEnds(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Retry-After", "3600")
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(srv.Close)
	c, _ := client.New(client.Config{BaseURL: srv.URL, Retry: client.RetryPolicy{MaxDelay: time.Hour}})
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := c.GetRun(ctx, "run_1")
		errc <- err
	}()
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
}

// TestAFailedCommandStillNamesItsKey: when every attempt fails, the result
// still carries the key the client generated and sent, so the caller can
// send the command again later as the same command, not a second one.
func TestAFailedCommandStillNamesItsKey(t *testing.T) {
	t.Parallel()
	sends := map[string]func(c *client.Client) (string, error){
		"a run command": func(c *client.Client) (string, error) {
			res, err := c.CreateRun(context.Background(), client.CreateRunRequest{AgentID: "demo",
				Input: client.UserInput{Content: "hi"}}, client.CommandOptions{})
			return res.IdempotencyKey, err
		},
		"a revoke": func(c *client.Client) (string, error) {
			res, err := c.RevokeGrant(context.Background(), "s1", "grant_1", "", client.CommandOptions{})
			return res.IdempotencyKey, err
		},
		"a session command": func(c *client.Client) (string, error) {
			res, err := c.SendSessionMessage(context.Background(), "s1", client.SessionMessageRequest{Content: "hi"},
				client.CommandOptions{})
			return res.IdempotencyKey, err
		},
	}
	for name, send := range sends {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, seen := flakyAPI(t, acceptedAnswer, 503, 502, 503, 504)
			key, err := send(c)
			if err == nil {
				t.Fatal("the command succeeded against an API that never answered it")
			}
			got := seen()
			if len(got) != 4 || key != got[0].key || !generatedKey.MatchString(key) {
				t.Fatalf("result key %q after %d attempts under %q; want the key the attempts were sent under", key, len(got), got[0].key)
			}
		})
	}
}

// TestHealthyAsksOnce: a health probe is not retried; an API answering 503
// is reported unhealthy after one request.
func TestHealthyAsksOnce(t *testing.T) {
	t.Parallel()
	c, seen := flakyAPI(t, acceptedAnswer, 503, 503, 503, 503)
	err := c.Healthy(context.Background())
	var p *client.Problem
	if !errors.Is(err, client.ErrUnavailable) || !errors.As(err, &p) || p.Status != 503 {
		t.Fatalf("Healthy = %v, want the 503 problem", err)
	}
	if n := len(seen()); n != 1 {
		t.Fatalf("%d requests, want 1", n)
	}
}
