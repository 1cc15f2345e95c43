package uistream_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/projections/uistream"
)

// BenchmarkFanOut streams one run over HTTP to 1,000 SSE clients of one API
// instance (one hub, one Streamer) and publishes b.N text deltas to the hub:
//
//	go test -run '^$' -bench FanOut -benchtime 2000x ./projections/uistream/
//
// "burst" publishes as fast as the clients take the events (never more than
// half a hub buffer ahead of the slowest, so none is cut off): throughput,
// delivered events/s summed over the clients. "paced" publishes 50 deltas a
// second, a fast model's rate: delivery latency from Publish to the client
// having read the chunk, p50 and p99.
func BenchmarkFanOut(b *testing.B) {
	for _, mode := range []struct {
		name  string
		pause time.Duration
	}{{"burst", 0}, {"paced", 20 * time.Millisecond}} {
		b.Run(mode.name, func(b *testing.B) { benchFanOut(b, 1000, mode.pause) })
	}
}

func benchFanOut(b *testing.B, clients int, pause time.Duration) {
	evs := deltaLog(b, b.N)
	src := newMemSource()
	src.put(evs, 3)     // accepted, started, item.started: the deltas come live
	const buffer = 1024 // the hub's default
	hub := newHub(b, buffer)
	s := newStreamer(b, hub, uistream.StreamConfig{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		uistream.SetHeaders(w.Header())
		w.WriteHeader(http.StatusOK)
		_ = s.Run(r.Context(), uistream.HTTPSink(w), src, "acme", runA, uistream.Position{})
	}))
	b.Cleanup(srv.Close)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: 0}}

	sent := make([]atomic.Int64, len(evs)+1) // publish time (ns) by seq
	var ready, finished sync.WaitGroup
	lat := make([][]time.Duration, clients)
	progress := make([]atomic.Int64, clients) // last seq each client read
	for i := range clients {
		ready.Add(1)
		finished.Add(1)
		go func() {
			defer finished.Done()
			lat[i] = readClient(b, client, srv.URL, &ready, sent, &progress[i])
		}()
	}
	ready.Wait()
	b.ResetTimer()
	start := time.Now()
	for _, e := range evs[3:] {
		sent[e.Seq].Store(time.Now().UnixNano())
		hub.Publish(e)
		if pause > 0 {
			<-time.After(pause) // the pace of a model's output
		} else if e.Seq%(buffer/2) == 0 {
			waitSlowest(progress, e.Seq-buffer/2)
		}
	}
	finished.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	slices.Sort(all)
	if len(all) == 0 {
		b.Fatal("no deliveries")
	}
	b.ReportMetric(float64(len(all))/elapsed.Seconds(), "events/s")
	b.ReportMetric(float64(all[len(all)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(all[len(all)*99/100].Microseconds())/1000, "p99-ms")
}

// deltaLog is a run that streams n deltas of one answer, then completes.
func deltaLog(b *testing.B, n int) []events.Envelope {
	l := started(b, runA, cmdA, "go")
	l.ItemStarted(r1, events.ItemAssistantMessage, nil)
	for i := range n {
		l.Deltas(r1, fmt.Sprintf("word %d ", i))
	}
	l.ItemCompleted(r1, events.ItemAssistantMessage, events.ItemStatusCompleted, "", nil)
	return l.Completed("").Events()
}

// readClient reads one SSE stream to [DONE] and returns, per event that
// arrived live, the time from its Publish to the client reading its chunk.
func readClient(b *testing.B, client *http.Client, url string, ready *sync.WaitGroup, sent []atomic.Int64, progress *atomic.Int64) []time.Duration {
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
	resp, err := client.Do(req)
	if err != nil {
		b.Error(err)
		ready.Done()
		return nil
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	var out []time.Duration
	once := sync.OnceFunc(ready.Done)
	defer once()
	for sc.Scan() {
		line := sc.Text()
		if strings.Contains(line, `"type":"start"`) {
			once()
		}
		id, ok := strings.CutPrefix(line, "id: ")
		if !ok || strings.Contains(id, ".") {
			continue
		}
		seq, _ := strconv.ParseInt(id, 10, 64)
		progress.Store(seq)
		if at := sent[seq].Load(); at > 0 {
			out = append(out, time.Duration(time.Now().UnixNano()-at))
		}
	}
	return out
}

// waitSlowest waits until every client has read up to seq.
func waitSlowest(progress []atomic.Int64, seq int64) {
	for i := range progress {
		for progress[i].Load() < seq {
			<-time.After(50 * time.Microsecond) // poll; the clients are busy reading
		}
	}
}
