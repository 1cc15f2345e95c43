package client_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/xbot-runtime/xbot/services/api/client"
)

// runPages serves GET /v1/runs in pages of one run each, cursors "1", "2";
// the third page is the last.
func runPages(t *testing.T) (*client.Client, *atomic.Int32) {
	t.Helper()
	var reads atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reads.Add(1)
		cur := r.URL.Query().Get("cursor")
		next := map[string]string{"": "1", "1": "2", "2": ""}[cur]
		_ = json.NewEncoder(w).Encode(client.RunPage{Runs: []client.Run{{RunID: "run_" + cur}}, NextCursor: next})
	}))
	t.Cleanup(srv.Close)
	c, err := client.New(client.Config{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return c, &reads
}

func TestRunsIteratesEveryPage(t *testing.T) {
	t.Parallel()
	c, reads := runPages(t)
	var ids []string
	for r, err := range c.Runs(context.Background(), client.RunQuery{}) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.RunID)
	}
	if len(ids) != 3 || ids[0] != "run_" || ids[2] != "run_2" || reads.Load() != 3 {
		t.Fatalf("runs %v after %d reads", ids, reads.Load())
	}
}

func TestAnIteratorReadsOnlyThePagesTheLoopAsksFor(t *testing.T) {
	t.Parallel()
	c, reads := runPages(t)
	for range c.Runs(context.Background(), client.RunQuery{}) {
		break
	}
	if reads.Load() != 1 {
		t.Fatalf("%d pages read for one run, want 1", reads.Load())
	}
}

func TestEventsIteratesToTheEndOfTheLog(t *testing.T) {
	t.Parallel()
	pages := map[string]client.EventPage{
		"4": {Events: []client.Event{{Seq: 5}, {Seq: 6}}, NextAfterSeq: 6},
		"6": {Events: []client.Event{}, NextAfterSeq: 6},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(pages[r.URL.Query().Get("afterSeq")])
	}))
	t.Cleanup(srv.Close)
	c, _ := client.New(client.Config{BaseURL: srv.URL})
	var seqs []int64
	for ev, err := range c.Events(context.Background(), "run_1", 4) {
		if err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, ev.Seq)
	}
	if len(seqs) != 2 || seqs[1] != 6 {
		t.Fatalf("seqs %v", seqs)
	}
}

// TestAPagingCycleIsAnError: a server whose cursors come back round (1 → 2
// → 1) makes the iterator and the collector stop with an error rather than
// read forever. The server gives up (500) after a few rounds, so without
// the check the loop ends on that 500 instead.
func TestAPagingCycleIsAnError(t *testing.T) {
	t.Parallel()
	var reads atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if reads.Add(1)%20 == 0 {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		next := map[string]string{"": "1", "1": "2", "2": "1"}[r.URL.Query().Get("cursor")]
		_ = json.NewEncoder(w).Encode(client.RunPage{Runs: []client.Run{{RunID: "run_x"}}, NextCursor: next})
	}))
	t.Cleanup(srv.Close)
	c, _ := client.New(client.Config{BaseURL: srv.URL, Retry: client.RetryPolicy{MaxAttempts: 1}})
	var last error
	for _, err := range c.Runs(context.Background(), client.RunQuery{}) {
		last = err
	}
	if last == nil || !strings.Contains(last.Error(), `cursor "1" again`) {
		t.Errorf("the iterator ended with %v, want the cycle named", last)
	}
	if _, err := c.AllRuns(context.Background(), client.RunQuery{}); err == nil || !strings.Contains(err.Error(), `cursor "1" again`) {
		t.Errorf("AllRuns ended with %v, want the cycle named", err)
	}
}
