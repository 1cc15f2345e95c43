package openai_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/services/engine/model"
	"github.com/xbot-runtime/xbot/services/engine/model/openai"
)

// failThenServe fails the first `failures` attempts with fail, then serves
// the recorded text stream.
func failThenServe(t *testing.T, failures int, fail func(w http.ResponseWriter, r *http.Request)) *server {
	t.Helper()
	return newServer(t, func(w http.ResponseWriter, r *http.Request, attempt int) {
		if attempt <= failures {
			fail(w, r)
			return
		}
		writeSSE(w, fixture(t, "openai-text.sse"), 0)
	})
}

// secondsBackoff makes waits easy to recognise: attempt n waits n seconds.
func secondsBackoff(c *openai.Config) {
	c.Backoff = func(attempt int) time.Duration { return time.Duration(attempt) * time.Second }
}

func TestRetryRecovers(t *testing.T) {
	t.Parallel()
	rate := rateLimitedResponse(t) // recorded 429 without Retry-After; the cases add it
	cases := []struct {
		name      string
		fail      func(w http.ResponseWriter, r *http.Request)
		wantWaits []time.Duration
	}{
		{"429 with Retry-After", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Retry-After", "7")
			rate.write(w)
		}, []time.Duration{7 * time.Second}},
		{"429 with retry-after-ms", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Retry-After-Ms", "250")
			rate.write(w)
		}, []time.Duration{250 * time.Millisecond}},
		{"429 with a Retry-After too long to honour", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Retry-After", "3600")
			rate.write(w)
		}, []time.Duration{time.Second}},
		{"500", func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, `{"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error"}}`, http.StatusInternalServerError)
		}, []time.Duration{time.Second}},
		{"connection reset", resetConnection, []time.Duration{time.Second}},
		{"closed before any byte", closeConnection, []time.Duration{time.Second}},
		{"stream broken before output", func(w http.ResponseWriter, _ *http.Request) {
			writeSSE(w, []byte(sseEvents(fixture(t, "openai-text.sse"))[0]), 0) // role chunk only
			panic(http.ErrAbortHandler)
		}, []time.Duration{time.Second}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := failThenServe(t, 1, tc.fail)
			p, sl := newProvider(t, srv.URL, secondsBackoff)
			res, _, err := call(t, p)
			if err != nil || !strings.HasPrefix(res.Text, "I'm unable") {
				t.Fatalf("res %q err %v", res.Text, err)
			}
			if n := srv.attempts.Load(); n != 2 {
				t.Errorf("%d attempts, want 2", n)
			}
			if !reflect.DeepEqual(sl.got(), tc.wantWaits) {
				t.Errorf("waits %v, want %v", sl.got(), tc.wantWaits)
			}
		})
	}
}

func TestRetryGivesUp(t *testing.T) {
	t.Parallel()
	srv := failThenServe(t, 100, func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, `{"error":{"message":"overloaded","type":"server_error"}}`, http.StatusServiceUnavailable)
	})
	p, sl := newProvider(t, srv.URL, secondsBackoff) // default MaxRetries: 3
	_, _, err := call(t, p)
	me := asModelError(t, err)
	if me.Status != 503 || !me.Retryable || me.Message != "overloaded" {
		t.Errorf("error = %+v", me)
	}
	want := []time.Duration{time.Second, 2 * time.Second, 3 * time.Second}
	if srv.attempts.Load() != 4 || !reflect.DeepEqual(sl.got(), want) {
		t.Errorf("%d attempts, waits %v; want 4 attempts, waits %v", srv.attempts.Load(), sl.got(), want)
	}
}

func TestNoRetry(t *testing.T) {
	t.Parallel()
	cases := map[string]func(w http.ResponseWriter, r *http.Request){
		"400": func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write(fixture(t, "openai-unsupported-parameter.json"))
		},
		"401": func(w http.ResponseWriter, _ *http.Request) {
			unauthorizedResponse(t).write(w)
		},
		"429 insufficient quota": func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, `{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`, http.StatusTooManyRequests)
		},
	}
	for name, fail := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := failThenServe(t, 1, fail)
			p, sl := newProvider(t, srv.URL, nil)
			_, _, err := call(t, p)
			if me := asModelError(t, err); me.Retryable || srv.attempts.Load() != 1 || len(sl.got()) != 0 {
				t.Errorf("error %+v after %d attempts, waits %v; want 1 attempt", me, srv.attempts.Load(), sl.got())
			}
		})
	}
}

// A connection that breaks after text was delivered is not repeated.
func TestBrokenStreamAfterOutput(t *testing.T) {
	t.Parallel()
	events := sseEvents(fixture(t, "openai-text.sse"))
	srv := failThenServe(t, 1, func(w http.ResponseWriter, _ *http.Request) {
		writeSSE(w, []byte(strings.Join(events[:4], "")), 0)
		panic(http.ErrAbortHandler)
	})
	p, _ := newProvider(t, srv.URL, nil)
	res, deltas, err := call(t, p)
	me := asModelError(t, err)
	if me.Retryable || me.Code != "stream_incomplete" || srv.attempts.Load() != 1 {
		t.Errorf("error %+v after %d attempts", me, srv.attempts.Load())
	}
	if res.Text != "I'm unable to" || len(deltas) != 3 {
		t.Errorf("partial text %q from %d deltas", res.Text, len(deltas))
	}
}

func TestFirstByteTimeout(t *testing.T) {
	t.Parallel()
	srv := newServer(t, func(_ http.ResponseWriter, r *http.Request, _ int) { <-r.Context().Done() })
	p, _ := newProvider(t, srv.URL, func(c *openai.Config) { c.Timeout, c.MaxRetries = 50*time.Millisecond, -1 })
	_, _, err := call(t, p)
	if me := asModelError(t, err); me.Code != "timeout" || !me.Retryable {
		t.Errorf("error = %+v", me)
	}
}

// Cancelling mid-stream returns what arrived and ctx's error.
func TestCancelMidStream(t *testing.T) {
	t.Parallel()
	events := sseEvents(fixture(t, "openai-text.sse"))
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		writeSSE(w, []byte(strings.Join(events[:6], "")), 0)
		<-r.Context().Done() // the rest never comes
	})
	p, sl := newProvider(t, srv.URL, nil)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	n := 0
	res, deltas, err := callCtx(ctx, p, func(model.Delta) {
		if n++; n == 5 {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if text, _ := joinDeltas(deltas); res.Text != text || res.Text != "I'm unable to provide real" {
		t.Errorf("partial text %q, deltas joined %q", res.Text, text)
	}
	if srv.attempts.Load() != 1 || len(sl.got()) != 0 {
		t.Errorf("%d attempts after cancel", srv.attempts.Load())
	}
}

func TestDefaultBackoff(t *testing.T) {
	t.Parallel()
	for attempt := 1; attempt <= 12; attempt++ {
		nominal := min(500*time.Millisecond<<(min(attempt, 7)-1), 20*time.Second)
		for range 50 {
			if d := openai.DefaultBackoff(attempt); d < nominal/2 || d > nominal {
				t.Fatalf("attempt %d: %v outside [%v, %v]", attempt, d, nominal/2, nominal)
			}
		}
	}
}

// resetConnection drops the TCP connection with a RST.
func resetConnection(w http.ResponseWriter, _ *http.Request) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(err)
	}
	if tcp, ok := conn.(*net.TCPConn); ok {
		_ = tcp.SetLinger(0)
	}
	_ = conn.Close()
}

// closeConnection closes the connection before writing anything.
func closeConnection(w http.ResponseWriter, _ *http.Request) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(err)
	}
	_ = conn.Close()
}
