package systemtest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/services/api/client"
	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/stack"
)

// Helpers of the output-limit tests (output_limits_test.go).

// outputEnv is agentEnv that also returns the local sandboxes' directory.
func outputEnv(t *testing.T, agents ...profile.Profile) (*env, *stack.Stack, string) {
	t.Helper()
	dir := t.TempDir()
	e, st, _ := agentEnvIn(t, dir, agents...)
	return e, st, dir
}

// sizedEvent is an event as the API returned it, with its size as JSON.
type sizedEvent struct {
	client.Event
	Bytes int
}

// eventPage reads one page of a run's events; it returns the events, the
// page's envelope bytes and nextAfterSeq.
func eventPage(t *testing.T, st *stack.Stack, runID string, after int64, limit int) ([]sizedEvent, int, int64) {
	t.Helper()
	page, err := apiOf(t, st).ListEvents(t.Context(), runID, after, limit)
	if err != nil {
		t.Fatalf("events: %v", err)
	}
	evs, total := sized(t, page.Events)
	return evs, total, page.NextAfterSeq
}

// sized gives each event its size as JSON and returns the sum too.
func sized(t *testing.T, page []client.Event) ([]sizedEvent, int) {
	t.Helper()
	out := make([]sizedEvent, 0, len(page))
	total := 0
	for _, ev := range page {
		raw, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, sizedEvent{Event: ev, Bytes: len(raw)})
		total += len(raw)
	}
	return out, total
}

// allSizedEvents pages through a run's whole log with pages of limit events
// and checks that the seqs have no gap and that each page's nextAfterSeq is
// its last seq.
func allSizedEvents(t *testing.T, st *stack.Stack, runID string, limit int) (evs []sizedEvent, pages int) {
	t.Helper()
	err := apiOf(t, st).EventPages(t.Context(), runID, 0, limit, func(p client.EventPage) error {
		pages++
		for _, ev := range p.Events {
			if ev.Seq != int64(len(evs))+1 {
				return fmt.Errorf("page %d: seq %d, want %d (a gap)", pages, ev.Seq, len(evs)+1)
			}
			page, _ := sized(t, []client.Event{ev})
			evs = append(evs, page...)
		}
		if last := p.Events[len(p.Events)-1].Seq; p.NextAfterSeq != last {
			return fmt.Errorf("page %d: nextAfterSeq %d, last seq of the page %d", pages, p.NextAfterSeq, last)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return evs, pages
}

// memPeak samples the process's heap while a test runs.
type memPeak struct {
	mu   sync.Mutex
	heap uint64
	stop chan struct{}
	done chan struct{}
}

func sampleMemory() *memPeak {
	m := &memPeak{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(m.done)
		tick := time.NewTicker(50 * time.Millisecond) // sampling rate, not a wait
		defer tick.Stop()
		for {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			m.mu.Lock()
			m.heap = max(m.heap, ms.HeapInuse)
			m.mu.Unlock()
			select {
			case <-m.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return m
}

// end stops sampling and returns the peak heap in use and the process's peak
// RSS (VmHWM), in MiB.
func (m *memPeak) end() (heapMiB, rssMiB float64) {
	close(m.stop)
	<-m.done
	raw, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb float64
			_, _ = fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), &kb)
			rssMiB = kb / 1024
		}
	}
	return float64(m.heap) / (1 << 20), rssMiB
}

// findFile returns the host file under dir whose name is the base of the
// sandbox path p.
func findFile(t *testing.T, dir, p string) []byte {
	t.Helper()
	var found string
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == filepath.Base(p) {
			found = path
		}
		return nil
	})
	if found == "" {
		t.Fatalf("offloaded file %s not found under %s", p, dir)
	}
	raw, err := os.ReadFile(found)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// kafkaBytes is the size of the run's records on the events topic.
func kafkaBytes(t *testing.T, e *env, runID string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	n := 0
	err := kafka.ReadTopic(ctx, e.kcfg, e.kcfg.EventsTopic(), func(r kafka.Record) error {
		if r.Key == runID {
			n += len(r.Value)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
