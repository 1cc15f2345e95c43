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

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/services/engine/compute/local"
	"github.com/xbot-runtime/xbot/services/engine/model"
	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/stack"
)

// Helpers of the output-limit tests (output_limits_test.go).

// outputEnv is agentEnv that also returns the local sandboxes' directory.
func outputEnv(t *testing.T, agents ...profile.Profile) (*env, *stack.Stack, string) {
	t.Helper()
	e := newEnv(t)
	cat, err := profile.NewCatalog(agents...)
	if err != nil {
		t.Fatal(err)
	}
	e.cat = cat
	dir := t.TempDir()
	comp, err := local.New(local.Config{Dir: dir, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	reqs := &requests{got: map[string][]model.Request{}}
	st := e.startWith("all", func(o *stack.Options) { o.Compute, o.Models = comp, reqs.resolver })
	return e, st, dir
}

// rawEvent is one event as the API returned it, with its size on the wire.
type rawEvent struct {
	Seq    int64
	Type   string
	ItemID string
	Bytes  int
	Body   map[string]any
}

// rawPage reads one page of a run's events; it returns the events, the
// page's envelope bytes and nextAfterSeq.
func rawPage(t *testing.T, st *stack.Stack, runID string, after int64, limit int) ([]rawEvent, int, int64) {
	t.Helper()
	code, body := call(t, st, "GET", fmt.Sprintf("/v1/runs/%s/events?after_seq=%d&limit=%d", runID, after, limit), token, nil)
	if code != 200 {
		t.Fatalf("events: HTTP %d %v", code, body)
	}
	list, _ := body["events"].([]any)
	out := make([]rawEvent, 0, len(list))
	total := 0
	for _, v := range list {
		m := v.(map[string]any)
		raw, _ := json.Marshal(m)
		item, _ := m["itemId"].(string)
		out = append(out, rawEvent{Seq: int64(m["seq"].(float64)), Type: m["type"].(string), ItemID: item, Bytes: len(raw), Body: m})
		total += len(raw)
	}
	return out, total, int64(body["nextAfterSeq"].(float64))
}

// allRawEvents pages through a run's whole log with pages of limit events
// and checks that the seqs have no gap.
func allRawEvents(t *testing.T, st *stack.Stack, runID string, limit int) (evs []rawEvent, pages int) {
	t.Helper()
	after := int64(0)
	for {
		page, _, next := rawPage(t, st, runID, after, limit)
		if len(page) == 0 {
			return evs, pages
		}
		pages++
		for _, ev := range page {
			if ev.Seq != int64(len(evs))+1 {
				t.Fatalf("page after %d: seq %d, want %d (a gap)", after, ev.Seq, len(evs)+1)
			}
			evs = append(evs, ev)
		}
		if next != page[len(page)-1].Seq {
			t.Fatalf("nextAfterSeq %d, last seq of the page %d", next, page[len(page)-1].Seq)
		}
		after = next
	}
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
