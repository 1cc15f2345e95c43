package stack_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
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
	"github.com/xbot-runtime/xbot/services/compute/local"
	"github.com/xbot-runtime/xbot/services/model"
	"github.com/xbot-runtime/xbot/services/profile"
	"github.com/xbot-runtime/xbot/services/stack"
)

// Output into the log, end to end: a tool that prints tens of megabytes adds a
// bounded number of events to the run's log, a run whose events pass its
// budget ends budget_exhausted, and event pages are cut by bytes.

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

func TestHugeToolOutputAddsABoundedLogToTheRun(t *testing.T) {
	// Not parallel: it measures the process's memory.
	agent := profile.Profile{ID: "flood", Model: profile.ModelScripted, Tools: []string{"shell"}, Script: []profile.Turn{
		{ToolCalls: call1("shell", `{"command":"head -c 40000000 /dev/urandom | base64"}`)},
		{Text: "Done."},
	}}
	e, st, dir := outputEnv(t, agent)
	mem := sampleMemory()
	runID := create(t, st, "flood", "flood the log", "flood-1")["runId"].(string)
	waitStatus(t, st, runID, "completed", 120*time.Second)
	heap, rss := mem.end()
	evs, _ := allRawEvents(t, st, runID, 1000)
	var shellID string
	var completed map[string]any
	total := 0
	for _, ev := range evs {
		total += ev.Bytes
		if ev.Type == "runtime.item.completed" && ev.Body["payload"].(map[string]any)["itemType"] == "command_execution" {
			shellID, completed = ev.ItemID, ev.Body["payload"].(map[string]any)
		}
	}
	if completed == nil {
		t.Fatalf("no completed command_execution item in %d events", len(evs))
	}
	deltas, deltaBytes, marker := 0, 0, 0
	for _, ev := range evs {
		if ev.ItemID != shellID || ev.Type != "runtime.item.delta" {
			continue
		}
		deltas++
		p := ev.Body["payload"].(map[string]any)
		deltaBytes += len(p["delta"].(string))
		if p["truncated"] == true {
			marker++
		}
	}
	t.Logf("40 MB output: %d events, %d bytes on Kafka for the run (%d via the API; %d deltas, %d delta bytes); peak heap %.0f MiB, peak RSS %.0f MiB",
		len(evs), kafkaBytes(t, e, runID), total, deltas, deltaBytes, heap, rss)
	if limit := profile.DefaultMaxStreamedOutputBytes + 1024; deltaBytes > limit {
		t.Errorf("the item streamed %d bytes of deltas, want at most %d", deltaBytes, limit)
	}
	if marker != 1 {
		t.Errorf("%d truncation markers on the item's deltas, want 1", marker)
	}
	if total > 1<<20 {
		t.Errorf("the run's log is %d bytes, want under 1 MiB", total)
	}
	ref, _ := completed["data"].(map[string]any)["outputRef"].(map[string]any)
	if ref == nil {
		t.Fatalf("the item has no outputRef: %v", completed["data"])
	}
	t.Logf("offloaded: %v bytes at %v", ref["bytes"], ref["path"])
	file := findFile(t, dir, ref["path"].(string))
	sum := sha256.Sum256(file)
	if len(file) != int(ref["bytes"].(float64)) || hex.EncodeToString(sum[:]) != ref["sha256"] {
		t.Errorf("offloaded file: %d bytes sha256 %x, the ref says %v", len(file), sum, ref)
	}
	e.invariants(st)
}

func TestRunPastItsEventBytesBudgetEndsBudgetExhausted(t *testing.T) {
	t.Parallel()
	big := call1("shell", `{"command":"head -c 60000 /dev/zero | tr '\\0' a"}`)
	agent := profile.Profile{ID: "chatty", Model: profile.ModelScripted, Tools: []string{"shell"},
		Limits: profile.Limits{MaxEventBytes: 300 << 10}, Script: []profile.Turn{
			{ToolCalls: big}, {ToolCalls: big}, {ToolCalls: big}, {ToolCalls: big}, {ToolCalls: big},
			{ToolCalls: big}, {ToolCalls: big}, {ToolCalls: big}, {Text: "Done."},
		}}
	e, st, _ := outputEnv(t, agent)
	runID := create(t, st, "chatty", "talk a lot", "chatty-1")["runId"].(string)
	waitStatus(t, st, runID, "failed", 30*time.Second)
	evs, _ := allRawEvents(t, st, runID, 1000)
	last := evs[len(evs)-1]
	p := last.Body["payload"].(map[string]any)
	if last.Type != "runtime.run.failed" || p["errorCode"] != "budget_exhausted" || !strings.Contains(p["message"].(string), "event bytes") {
		t.Fatalf("last event %s %v, want runtime.run.failed budget_exhausted naming the event bytes", last.Type, p)
	}
	total := 0
	for _, ev := range evs {
		total += ev.Bytes
	}
	if total > 300<<10 {
		t.Errorf("the run's log is %d bytes, over its budget of %d", total, 300<<10)
	}
	e.invariants(st)
}

func TestEventPagesAreCutByBytes(t *testing.T) {
	t.Parallel()
	// Streams about 3 MB of deltas in one item (the stream cap raised for it).
	agent := profile.Profile{ID: "pager", Model: profile.ModelScripted, Tools: []string{"shell"},
		Limits: profile.Limits{MaxStreamedOutputBytes: 4 << 20}, Script: []profile.Turn{
			{ToolCalls: call1("shell", `{"command":"head -c 2200000 /dev/zero | base64"}`)},
			{Text: "Done."},
		}}
	e, st, _ := outputEnv(t, agent)
	runID := create(t, st, "pager", "page me", "pager-1")["runId"].(string)
	waitStatus(t, st, runID, "completed", 60*time.Second)
	page, bytes, next := rawPage(t, st, runID, 0, 1000)
	if len(page) == 0 || bytes > 1<<20 && len(page) > 1 {
		t.Errorf("first page: %d events, %d bytes; want at most 1 MiB (or one event)", len(page), bytes)
	}
	evs, pages := allRawEvents(t, st, runID, 1000)
	if evs[len(evs)-1].Type != "runtime.run.completed" || pages < 3 {
		t.Errorf("read %d events in %d pages, ending %s; want the whole log in at least 3 pages", len(evs), pages, evs[len(evs)-1].Type)
	}
	if next != page[len(page)-1].Seq {
		t.Errorf("nextAfterSeq %d after a page ending at %d", next, page[len(page)-1].Seq)
	}
	e.invariants(st)
}

func TestTrickledToolOutputAddsABoundedNumberOfDeltas(t *testing.T) {
	t.Parallel()
	// One byte every 60 ms: longer than the flush interval, so each byte
	// would be a delta of its own.
	const limit = 3000
	agent := profile.Profile{ID: "trickle", Model: profile.ModelScripted, Tools: []string{"shell"},
		Limits: profile.Limits{MaxStreamedOutputBytes: limit}, Script: []profile.Turn{
			{ToolCalls: call1("shell", `{"command":"for i in $(seq 1 40); do printf x; sleep 0.06; done"}`)},
			{Text: "Done."},
		}}
	e, st, _ := outputEnv(t, agent)
	runID := create(t, st, "trickle", "drip", "trickle-1")["runId"].(string)
	waitStatus(t, st, runID, "completed", 60*time.Second)
	evs, _ := allRawEvents(t, st, runID, 1000)
	shellID := ""
	deltas, logged, markers := 0, 0, 0
	for _, ev := range evs {
		p := ev.Body["payload"].(map[string]any)
		switch {
		case ev.Type == "runtime.item.started" && p["itemType"] == "command_execution":
			shellID = ev.ItemID
		case ev.Type != "runtime.item.delta" || ev.ItemID != shellID:
		case p["truncated"] == true:
			markers++
		default:
			deltas++
			logged += ev.Bytes
		}
	}
	t.Logf("trickle: %d deltas taking %d bytes, %d markers", deltas, logged, markers)
	if deltas > limit/300 || markers != 1 {
		t.Errorf("%d deltas and %d markers; want at most %d deltas (a %d-byte cap at ~300 bytes a delta) and 1 marker",
			deltas, markers, limit/300, limit)
	}
	e.invariants(st)
}
