package client_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/xbot-runtime/xbot/services/api/client"
)

// streamAPI answers every request with body as a 200 event stream.
func streamAPI(t *testing.T, body string) *client.Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/runs/run_1/stream" {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	c, err := client.New(client.Config{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestFollowRunReadsEventsUntilDone(t *testing.T) {
	t.Parallel()
	c := streamAPI(t, ": keep-alive\n\nid: 1\ndata: {\"type\":\"start\"}\n\nid: 2\ndata:a\ndata: b\n\n"+
		"data: [DONE]\n\nid: 3\ndata: after the end\n\n")
	var got []client.StreamEvent
	err := c.FollowRun(context.Background(), "run_1", "", func(ev client.StreamEvent) error {
		got = append(got, ev)
		return nil
	})
	want := []client.StreamEvent{{ID: "1", Data: `{"type":"start"}`}, {ID: "2", Data: "a\nb"}}
	if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("FollowRun = %q, %v; want %q, nil", got, err, want)
	}
}

// TestFollowRunReadsALineLongerThanItsFirstBuffer reads a data line of
// 300 KiB, past the reader's first buffer, whole.
func TestFollowRunReadsALineLongerThanItsFirstBuffer(t *testing.T) {
	t.Parallel()
	long := `{"type":"text-delta","delta":"` + strings.Repeat("x", 300<<10) + `"}`
	c := streamAPI(t, "id: 1\ndata: "+long+"\n\nid: 2\ndata: {}\n\ndata: [DONE]\n\n")
	var got []client.StreamEvent
	if err := c.FollowRun(t.Context(), "run_1", "", func(e client.StreamEvent) error {
		got = append(got, e)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != "1" || got[0].Data != long || got[1].ID != "2" || got[1].Data != "{}" {
		t.Fatalf("events: %d, first %q (%d bytes of data)", len(got), got[0].ID, len(got[0].Data))
	}
}

func TestFollowRunEndings(t *testing.T) {
	t.Parallel()
	stop := errors.New("enough")
	tests := []struct {
		name, body string
		fn         func(client.StreamEvent) error
		want       error
	}{
		{"closed before [DONE]", "id: 1\ndata: x\n\n", func(client.StreamEvent) error { return nil }, client.ErrStreamEnded},
		{"an unfinished event is not one", "id: 1\ndata: [DONE]", func(client.StreamEvent) error { return nil }, client.ErrStreamEnded},
		{"fn's error stops it", "id: 1\ndata: x\n\ndata: [DONE]\n\n", func(client.StreamEvent) error { return stop }, stop},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := streamAPI(t, tc.body).FollowRun(context.Background(), "run_1", "", tc.fn)
			if !errors.Is(err, tc.want) {
				t.Fatalf("FollowRun = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestFollowRunRefusedIsAProblem(t *testing.T) {
	t.Parallel()
	err := streamAPI(t, "").FollowRun(context.Background(), "run_other", "", func(client.StreamEvent) error { return nil })
	var p *client.Problem
	if !errors.As(err, &p) || p.Status != http.StatusNotFound {
		t.Fatalf("FollowRun = %v, want a 404 problem", err)
	}
}

// runAPI answers the i-th GET /v1/runs/run_1 (from 0) with answer(i).
func runAPI(t *testing.T, answer func(i int64) (int, string)) (*client.Client, *atomic.Int64) {
	t.Helper()
	var reads atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		status, body := answer(reads.Add(1) - 1)
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	c, err := client.New(client.Config{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return c, &reads
}

func runJSON(status string) string { return `{"runId":"run_1","status":"` + status + `"}` }

func completed(r client.Run) bool { return r.Status == "completed" }

func TestAwaitRunWaitsThroughNotFoundAndUnfinished(t *testing.T) {
	t.Parallel()
	answers := []string{"", runJSON("queued"), runJSON("running"), runJSON("completed")}
	c, reads := runAPI(t, func(i int64) (int, string) {
		if i == 0 {
			return http.StatusNotFound, `{"status":404,"title":"Not Found","code":"not_found"}`
		}
		return http.StatusOK, answers[min(i, 3)]
	})
	r, err := c.AwaitRun(context.Background(), "run_1", completed)
	if err != nil || r.Status != "completed" || reads.Load() != 4 {
		t.Fatalf("AwaitRun = %+v, %v after %d reads; want completed after 4", r, err, reads.Load())
	}
}

func TestAwaitRunGivesUpWhenTheContextEnds(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, _ := runAPI(t, func(i int64) (int, string) {
		if i == 2 {
			cancel()
		}
		return http.StatusOK, runJSON("running")
	})
	r, err := c.AwaitRun(ctx, "run_1", completed)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "still running") || r.Status != "running" {
		t.Fatalf("AwaitRun = %+v, %v; want the last run (running) and context.Canceled", r, err)
	}
}

func TestAwaitRunStopsAtARefusal(t *testing.T) {
	t.Parallel()
	c, reads := runAPI(t, func(int64) (int, string) {
		return http.StatusForbidden, `{"status":403,"title":"Forbidden","code":"forbidden_scope"}`
	})
	_, err := c.AwaitRun(context.Background(), "run_1", completed)
	var p *client.Problem
	if !errors.As(err, &p) || p.Code != "forbidden_scope" || reads.Load() != 1 {
		t.Fatalf("AwaitRun = %v after %d reads; want the 403 problem after 1", err, reads.Load())
	}
}
