package client_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/services/api/client"
)

// cutStream serves a run stream of ids after Last-Event-ID; its first
// connection sends the first chunk whole and then only the start of the
// second — cut in the middle of its data line — before the connection
// ends, the way cut says: "abort" resets it, "close" ends it cleanly
// (a response without a length, ended by closing the connection).
type cutStream struct {
	ids []string
	cut string
	mu  sync.Mutex
	n   int
}

func (s *cutStream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.n++
	first := s.n == 1
	s.mu.Unlock()
	start := 0
	for i, id := range s.ids {
		if id == r.Header.Get("Last-Event-ID") {
			start = i + 1
		}
	}
	var b strings.Builder
	for _, id := range s.ids[start:] {
		fmt.Fprintf(&b, "id: %s\ndata: {\"type\":\"text-delta\",\"id\":\"t\",\"delta\":%q}\n\n", id, id)
	}
	body := b.String() + "data: [DONE]\n\n"
	if !first {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, body)
		return
	}
	second := strings.Index(body, "id: "+s.ids[1])
	partial := body[:second+len("id: "+s.ids[1]+"\ndata: {\"type\":\"text-del")]
	if s.cut == "abort" {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, partial)
		_ = http.NewResponseController(w).Flush()
		panic(http.ErrAbortHandler)
	}
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(err)
	}
	defer conn.Close()
	_, _ = buf.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n" + partial)
	_ = buf.Flush()
}

// TestAConnectionCutMidLineLosesNoChunk: a connection that ends in the
// middle of a chunk's data line — reset, or closed cleanly — yields neither
// the broken chunk nor a gap: the stream resumes after the last whole chunk
// and yields each chunk once.
func TestAConnectionCutMidLineLosesNoChunk(t *testing.T) {
	t.Parallel()
	for _, cut := range []string{"abort", "close"} {
		t.Run(cut, func(t *testing.T) {
			t.Parallel()
			s := &cutStream{ids: []string{"1", "2.0", "2", "3"}, cut: cut}
			c := streamClient(t, s)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var got []string
			for ch, err := range c.RunChunks(ctx, "run_1", client.StreamOptions{}) {
				if err != nil {
					t.Fatal(err)
				}
				if ch.Delta != ch.EventID {
					t.Fatalf("chunk %s carries %q", ch.EventID, ch.Delta)
				}
				got = append(got, ch.EventID)
			}
			s.mu.Lock()
			n := s.n
			s.mu.Unlock()
			if fmt.Sprint(got) != fmt.Sprint(s.ids) || n != 2 {
				t.Fatalf("chunks %v over %d connections, want %v over 2", got, n, s.ids)
			}
		})
	}
}

// silentStream serves a run stream of ids after Last-Event-ID; its first
// connection sends the first chunk and then nothing at all, not even a
// keep-alive, until the client goes away: a connection that died without
// a reset.
type silentStream struct {
	ids  []string
	mu   sync.Mutex
	asks []string
}

func (s *silentStream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	last := r.Header.Get("Last-Event-ID")
	s.mu.Lock()
	s.asks = append(s.asks, last)
	first := len(s.asks) == 1
	s.mu.Unlock()
	start := 0
	for i, id := range s.ids {
		if id == last {
			start = i + 1
		}
	}
	w.Header().Set("Content-Type", "text/event-stream")
	for _, id := range s.ids[start:] {
		_, _ = fmt.Fprintf(w, "id: %s\ndata: {\"type\":\"text-delta\",\"id\":\"t\",\"delta\":%q}\n\n", id, id)
		if first {
			_ = http.NewResponseController(w).Flush()
			<-r.Context().Done()
			return
		}
	}
	_, _ = io.WriteString(w, "data: [DONE]\n\n")
}

// TestASilentConnectionIsReplaced: a connection that goes silent is dropped
// after IdleTimeout and the stream goes on after the last chunk received,
// each chunk once; had it waited for the connection to end, it would wait
// for ever.
func TestASilentConnectionIsReplaced(t *testing.T) {
	t.Parallel()
	s := &silentStream{ids: []string{"1", "2", "3"}}
	c := streamClient(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var got []string
	for ch, err := range c.RunChunks(ctx, "run_1", client.StreamOptions{IdleTimeout: 100 * time.Millisecond}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ch.EventID)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if fmt.Sprint(got) != "[1 2 3]" || len(s.asks) < 2 || s.asks[1] != "1" {
		t.Fatalf("chunks %v after asking %q; want 1 2 3, the second connection after 1", got, s.asks)
	}
}

// TestAStreamThatStaysSilentGivesUp: reconnects that each go silent count
// as reconnects that deliver nothing; the last error says so.
func TestAStreamThatStaysSilentGivesUp(t *testing.T) {
	t.Parallel()
	c := streamClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_ = http.NewResponseController(w).Flush()
		<-r.Context().Done()
	}))
	var last error
	for _, err := range c.SessionChunks(context.Background(), "s1", client.StreamOptions{MaxReconnects: 2, IdleTimeout: 10 * time.Millisecond}) {
		last = err
	}
	if !errors.Is(last, client.ErrStreamIdle) {
		t.Fatalf("last error %v, want ErrStreamIdle", last)
	}
}
