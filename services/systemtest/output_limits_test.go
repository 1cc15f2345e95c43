package systemtest_test

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/engine/profile"
)

// Output into the log, end to end: a tool that prints tens of megabytes adds a
// bounded number of events to the run's log, a run whose events pass its
// budget ends budget_exhausted, and event pages are cut by bytes.

func TestHugeToolOutputAddsABoundedLogToTheRun(t *testing.T) {
	// Not parallel: it measures the process's memory.
	agent := profile.Profile{ID: "flood", Model: profile.ModelScripted, Tools: []string{"shell"}, Script: []profile.Turn{
		{ToolCalls: call1("shell", `{"command":"head -c 40000000 /dev/urandom | base64"}`)},
		{Text: "Done."},
	}}
	e, st, dir := outputEnv(t, agent)
	mem := sampleMemory()
	runID := runUntil(t, st, "flood", "flood the log", "flood-1", "completed", 120*time.Second)
	heap, rss := mem.end()
	evs, _ := allSizedEvents(t, st, runID, 1000)
	var shellID string
	var completed *events.ItemCompletedPayload
	total := 0
	for _, ev := range evs {
		total += ev.Bytes
		if ev.Type != events.ItemCompleted {
			continue
		}
		if p := payloadOf[events.ItemCompletedPayload](t, ev.Event); p.ItemType == events.ItemCommandExecution {
			shellID, completed = ev.ItemID, &p
		}
	}
	if completed == nil {
		t.Fatalf("no completed command_execution item in %d events", len(evs))
	}
	deltas, deltaBytes, marker := 0, 0, 0
	for _, ev := range evs {
		if ev.ItemID != shellID || ev.Type != events.ItemDelta {
			continue
		}
		deltas++
		p := payloadOf[events.ItemDeltaPayload](t, ev.Event)
		deltaBytes += len(p.Delta)
		if p.Truncated {
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
	ref := dataOf[events.ToolResultData](t, completed.Data).OutputRef
	if ref == nil {
		t.Fatalf("the item has no outputRef: %s", completed.Data)
	}
	t.Logf("offloaded: %d bytes at %s", ref.Bytes, ref.Path)
	file := findFile(t, dir, ref.Path)
	sum := sha256.Sum256(file)
	if int64(len(file)) != ref.Bytes || hex.EncodeToString(sum[:]) != ref.SHA256 {
		t.Errorf("offloaded file: %d bytes sha256 %x, the ref says %+v", len(file), sum, ref)
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
	runID := runUntil(t, st, "chatty", "talk a lot", "chatty-1", "failed", 30*time.Second)
	evs, _ := allSizedEvents(t, st, runID, 1000)
	last := evs[len(evs)-1]
	if last.Type != events.RunFailed {
		t.Fatalf("last event %s, want runtime.run.failed", last.Type)
	}
	if p := payloadOf[events.RunFailedPayload](t, last.Event); p.ErrorCode != events.FailBudgetExhausted || !strings.Contains(p.Message, "event bytes") {
		t.Fatalf("last event %s %+v, want runtime.run.failed budget_exhausted naming the event bytes", last.Type, p)
	}
	total := 0
	for _, ev := range evs {
		total += ev.Bytes
	}
	t.Logf("budget: the run ended after %d events, %d bytes, under a budget of %d", len(evs), total, 300<<10)
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
	runID := runUntil(t, st, "pager", "page me", "pager-1", "completed", 60*time.Second)
	page, bytes, next := eventPage(t, st, runID, 0, 1000)
	if len(page) == 0 || bytes > 1<<20 && len(page) > 1 {
		t.Fatalf("first page: %d events, %d bytes; want at most 1 MiB (or one event)", len(page), bytes)
	}
	evs, pages := allSizedEvents(t, st, runID, 1000)
	if evs[len(evs)-1].Type != events.RunCompleted || pages < 3 {
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
	runID := runUntil(t, st, "trickle", "drip", "trickle-1", "completed", 60*time.Second)
	evs, _ := allSizedEvents(t, st, runID, 1000)
	shellID := ""
	deltas, logged, markers := 0, 0, 0
	for _, ev := range evs {
		switch {
		case ev.Type == events.ItemStarted && payloadOf[events.ItemStartedPayload](t, ev.Event).ItemType == events.ItemCommandExecution:
			shellID = ev.ItemID
		case ev.Type != events.ItemDelta || ev.ItemID != shellID:
		case payloadOf[events.ItemDeltaPayload](t, ev.Event).Truncated:
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
