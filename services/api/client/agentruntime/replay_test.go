package agentruntime_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/services/api/client"
	"github.com/xbot-runtime/xbot/services/api/client/agentruntime"
)

// session is the session id the replays serve.
const session = "recorded"

// chunk is one server-sent event of a recorded session stream.
type chunk struct{ id, data string }

// readRecording reads a recorded session stream (testdata/<name>.sse, as
// TestRecordRuntimeClientLogs in services/systemtest wrote it).
func readRecording(t *testing.T, path string) []chunk {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []chunk
	var cur chunk
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		switch line := sc.Text(); {
		case strings.HasPrefix(line, "id: "):
			cur.id = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "data: "):
			cur.data = strings.TrimPrefix(line, "data: ")
		case line == "" && cur.id != "":
			out = append(out, cur)
			cur = chunk{}
		}
	}
	if err := sc.Err(); err != nil || len(out) == 0 {
		t.Fatalf("%s: %d chunks, %v", path, len(out), err)
	}
	return out
}

// replay serves a recorded session stream as the API would: the session's
// first run, and its stream after any chunk id (Last-Event-ID), ended by
// [DONE] after the last recorded chunk so that a reader stops there. With
// drop > 0 it cuts every connection after drop chunks, as a flaky network
// would.
type replay struct {
	chunks []chunk
	mu     sync.Mutex
	drop   int
}

func (r *replay) firstRun() string { run, _, _ := strings.Cut(r.chunks[0].id, ":"); return run }

func (r *replay) setDrop(n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.drop = n
}

func (r *replay) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	switch req.URL.Path {
	case "/v1/sessions/" + session + "/runs":
		_ = json.NewEncoder(w).Encode(map[string]any{"session": map[string]string{"platformSessionId": session,
			"firstRunId": r.firstRun()}, "runs": []any{}})
	case "/v1/sessions/" + session + "/stream":
		r.stream(w, req.Header.Get("Last-Event-ID"))
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

func (r *replay) stream(w http.ResponseWriter, after string) {
	start := -1
	if after == r.firstRun()+":0" {
		start = 0
	}
	for i, c := range r.chunks {
		if c.id == after {
			start = i + 1
		}
	}
	if start < 0 {
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusUnprocessableEntity)
		_, _ = io.WriteString(w, `{"status":422,"title":"Unprocessable Entity","code":"validation_failed"}`)
		return
	}
	r.mu.Lock()
	drop := r.drop
	r.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	for n, c := range r.chunks[start:] {
		if drop > 0 && n == drop {
			return // the connection drops
		}
		_, _ = fmt.Fprintf(w, "id: %s\ndata: %s\n\n", c.id, c.data)
	}
	_, _ = io.WriteString(w, "data: [DONE]\n\n")
}

// replayClient is a runtime client of the replayed session.
func replayClient(t *testing.T, r *replay) *agentruntime.Client {
	t.Helper()
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	api, err := client.New(client.Config{BaseURL: srv.URL, Retry: client.RetryPolicy{MinDelay: time.Millisecond, MaxDelay: time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	rc, err := agentruntime.New(agentruntime.Config{API: api, SessionID: session, AgentID: "recorded"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rc.Close() })
	return rc
}

// collect reads every event after cursor, to the end of the replay.
func collect(t *testing.T, rc *agentruntime.Client, cursor *agentruntime.Cursor) []agentruntime.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out []agentruntime.Event
	for ev, err := range rc.Events(ctx, cursor) {
		if err != nil {
			t.Fatalf("events after %v: %v", cursor, err)
		}
		out = append(out, ev)
	}
	return out
}

func encoded(t *testing.T, evs []agentruntime.Event) []string {
	t.Helper()
	out := make([]string, len(evs))
	for i, ev := range evs {
		raw, err := agentruntime.Encode(ev)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = string(raw)
	}
	return out
}
