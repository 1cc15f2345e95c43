package client_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/services/api/client"
)

// droppingStream serves the chunks of a run stream after Last-Event-ID and
// cuts every connection after `per` chunks, without [DONE], until the last
// chunk went out; then [DONE]. It records each request's Last-Event-ID.
type droppingStream struct {
	ids  []string
	per  int
	mu   sync.Mutex
	asks []string
}

func (d *droppingStream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	last := r.Header.Get("Last-Event-ID")
	d.mu.Lock()
	d.asks = append(d.asks, last)
	d.mu.Unlock()
	start := 0
	for i, id := range d.ids {
		if id == last {
			start = i + 1
		}
	}
	w.Header().Set("Content-Type", "text/event-stream")
	end := min(start+d.per, len(d.ids))
	for _, id := range d.ids[start:end] {
		_, _ = fmt.Fprintf(w, "id: %s\ndata: {\"type\":\"text-delta\",\"id\":\"t\",\"delta\":%q}\n\n: keep-alive\n\n", id, id)
	}
	if end == len(d.ids) {
		_, _ = io.WriteString(w, "data: [DONE]\n\n")
	}
}

func streamClient(t *testing.T, h http.Handler) *client.Client {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c, err := client.New(client.Config{BaseURL: srv.URL, Retry: client.RetryPolicy{MinDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestRunChunksResumeAfterADroppedConnection: every connection drops after
// two chunks; the loop sees each chunk once, in order, and each reconnect
// asks for what follows the last chunk it saw.
func TestRunChunksResumeAfterADroppedConnection(t *testing.T) {
	t.Parallel()
	d := &droppingStream{ids: []string{"1", "2.0", "2.1", "2", "5", "7.0", "7"}, per: 2}
	c := streamClient(t, d)
	var got []string
	for ch, err := range c.RunChunks(context.Background(), "run_1", client.StreamOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		if ch.Type != "text-delta" || ch.Delta != ch.EventID || !strings.Contains(string(ch.Raw), ch.EventID) {
			t.Fatalf("chunk %+v", ch)
		}
		got = append(got, ch.EventID)
	}
	if strings.Join(got, " ") != strings.Join(d.ids, " ") {
		t.Fatalf("chunks %v, want %v", got, d.ids)
	}
	if want := []string{"", "2.0", "2", "7.0"}; fmt.Sprint(d.asks) != fmt.Sprint(want) {
		t.Errorf("Last-Event-IDs %q, want %q", d.asks, want)
	}
}

// TestRunChunksStartAfter: StreamOptions.After is the first Last-Event-ID.
func TestRunChunksStartAfter(t *testing.T) {
	t.Parallel()
	d := &droppingStream{ids: []string{"1", "2", "3"}, per: 10}
	c := streamClient(t, d)
	var got []string
	for ch, err := range c.RunChunks(context.Background(), "run_1", client.StreamOptions{After: "1"}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ch.EventID)
	}
	if fmt.Sprint(got) != "[2 3]" || fmt.Sprint(d.asks) != "[1]" {
		t.Fatalf("chunks %v after asking %q", got, d.asks)
	}
}

func TestAStreamThatIsRefusedEndsWithTheProblem(t *testing.T) {
	t.Parallel()
	c := streamClient(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"status":404,"title":"Not Found","code":"not_found"}`)
	}))
	n := 0
	for _, err := range c.SessionChunks(context.Background(), "s1", client.StreamOptions{}) {
		n++
		if !errors.Is(err, client.ErrNotFound) {
			t.Fatalf("error %v, want not_found", err)
		}
	}
	if n != 1 {
		t.Fatalf("%d yields, want the one error", n)
	}
}

func TestAStreamThatNeverDeliversGivesUp(t *testing.T) {
	t.Parallel()
	c := streamClient(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, ": keep-alive\n\n")
	}))
	var last error
	for _, err := range c.SessionChunks(context.Background(), "s1", client.StreamOptions{MaxReconnects: 3}) {
		last = err
	}
	if !errors.Is(last, client.ErrStreamEnded) {
		t.Fatalf("last error %v, want ErrStreamEnded", last)
	}
}

func TestABadChunkEndsTheStream(t *testing.T) {
	t.Parallel()
	c := streamClient(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "id: 1\ndata: {\"type\":\"start\"}\n\nid: 2\ndata: not json\n\n")
	}))
	var types []string
	var last error
	for ch, err := range c.RunChunks(context.Background(), "run_1", client.StreamOptions{}) {
		if err != nil {
			last = err
			continue
		}
		types = append(types, ch.Type)
	}
	if fmt.Sprint(types) != "[start]" || last == nil || !strings.Contains(last.Error(), "chunk 2") {
		t.Fatalf("chunks %v, error %v", types, last)
	}
}

func TestBreakingTheLoopStopsTheStream(t *testing.T) {
	t.Parallel()
	d := &droppingStream{ids: []string{"1", "2", "3"}, per: 1}
	c := streamClient(t, d)
	for ch, err := range c.RunChunks(context.Background(), "run_1", client.StreamOptions{}) {
		if err != nil || ch.EventID != "1" {
			t.Fatalf("first chunk %+v, %v", ch, err)
		}
		break
	}
	if len(d.asks) != 1 {
		t.Fatalf("%d requests after the loop stopped at the first chunk, want 1", len(d.asks))
	}
}
