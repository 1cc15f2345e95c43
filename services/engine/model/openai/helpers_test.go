package openai_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/services/engine/model"
	"github.com/xbot-runtime/xbot/services/engine/model/openai"
)

// fixture returns a file from testdata.
func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// chunkLines returns the JSON lines of a *.chunks.txt fixture (one recorded
// chunk per line, SSE framing stripped by the recorder).
func chunkLines(t *testing.T, name string) []string {
	t.Helper()
	var out []string
	for _, l := range strings.Split(string(fixture(t, name)), "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

// frame puts chunk lines back into the SSE framing they were recorded from,
// ending with [DONE] when done is set.
func frame(lines []string, done bool) []byte {
	var b bytes.Buffer
	for _, l := range lines {
		b.WriteString("data: " + l + "\n\n")
	}
	if done {
		b.WriteString("data: [DONE]\n\n")
	}
	return b.Bytes()
}

// sseEvents splits a raw SSE fixture into its events (each with its
// trailing blank line).
func sseEvents(raw []byte) []string {
	var out []string
	for _, ev := range strings.SplitAfter(string(raw), "\n\n") {
		if strings.TrimSpace(ev) != "" {
			out = append(out, ev)
		}
	}
	return out
}

// recordedResponse is a recorded HTTP error response: the status and
// Content-Type the recording shows, and the body kept in testdata (see
// PROVENANCE.md).
type recordedResponse struct {
	status int
	header http.Header
	body   string
}

func recorded(t *testing.T, status int, contentType, file string) recordedResponse {
	t.Helper()
	return recordedResponse{status: status, header: http.Header{"Content-Type": {contentType}}, body: string(fixture(t, file))}
}

func (r recordedResponse) write(w http.ResponseWriter) {
	for k, v := range r.header {
		w.Header()[k] = v
	}
	w.WriteHeader(r.status)
	_, _ = w.Write([]byte(r.body))
}

// writeSSE sends body as an event stream, flushing every `piece` bytes (0:
// all at once) so the client sees arbitrary read boundaries.
func writeSSE(w http.ResponseWriter, body []byte, piece int) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	if piece <= 0 {
		piece = len(body)
	}
	for len(body) > 0 {
		n := min(piece, len(body))
		_, _ = w.Write(body[:n])
		_ = rc.Flush()
		body = body[n:]
	}
}

// server is an httptest server whose handler sees the attempt number (1-based).
type server struct {
	*httptest.Server
	attempts atomic.Int32
	mu       sync.Mutex
	requests []*http.Request
	bodies   [][]byte
}

func newServer(t *testing.T, h func(w http.ResponseWriter, r *http.Request, attempt int)) *server {
	t.Helper()
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b bytes.Buffer
		_, _ = b.ReadFrom(r.Body)
		s.mu.Lock()
		s.requests = append(s.requests, r)
		s.bodies = append(s.bodies, b.Bytes())
		s.mu.Unlock()
		h(w, r, int(s.attempts.Add(1)))
	}))
	t.Cleanup(s.Close)
	return s
}

// request returns the i-th request the server saw, and its body.
func (s *server) request(i int) (*http.Request, []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[i], s.bodies[i]
}

// sseServer always answers with body.
func sseServer(t *testing.T, body []byte) *server {
	t.Helper()
	return newServer(t, func(w http.ResponseWriter, _ *http.Request, _ int) { writeSSE(w, body, 0) })
}

// sleeps records the waits a provider asked for.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.d = append(s.d, d)
	return ctx.Err()
}

func (s *sleeps) got() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.d...)
}

// newProvider returns a provider for srv with cfg adjusted by mutate; it
// records waits instead of sleeping.
func newProvider(t *testing.T, url string, mutate func(*openai.Config)) (*openai.Provider, *sleeps) {
	t.Helper()
	cfg := openai.Config{BaseURL: url + "/v1", APIKey: "sk-test-key", Model: "test-model"}
	if mutate != nil {
		mutate(&cfg)
	}
	p, err := openai.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := &sleeps{}
	p.SetSleep(s.sleep)
	return p, s
}

// call streams a one-message request and collects the deltas.
func call(t *testing.T, p *openai.Provider) (model.Response, []model.Delta, error) {
	t.Helper()
	return callCtx(t.Context(), p, nil)
}

func callCtx(ctx context.Context, p *openai.Provider, each func(model.Delta)) (model.Response, []model.Delta, error) {
	var deltas []model.Delta
	req := model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}}
	res, err := p.Stream(ctx, req, func(d model.Delta) {
		deltas = append(deltas, d)
		if each != nil {
			each(d)
		}
	})
	return res, deltas, err
}

// asModelError unwraps err to *model.Error or fails.
func asModelError(t *testing.T, err error) *model.Error {
	t.Helper()
	var me *model.Error
	if !errors.As(err, &me) {
		t.Fatalf("error %v (%T) is not a *model.Error", err, err)
	}
	return me
}

// joinDeltas concatenates the text and the reasoning of deltas.
func joinDeltas(ds []model.Delta) (text, reasoning string) {
	var tb, rb strings.Builder
	for _, d := range ds {
		tb.WriteString(d.Text)
		rb.WriteString(d.Reasoning)
	}
	return tb.String(), rb.String()
}
