package tracing

import (
	"context"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// maxParents bounds the runs whose command's trace waits for their engine:
// a command that never makes its run go (a duplicate, a rejection) leaves
// its entry until newer ones push it out.
const maxParents = 10_000

// parents remembers, per run, the trace of the last command that made the
// run go (a create, an input, an approval), until the run's engine starts.
var parents = struct {
	mu    sync.Mutex
	m     map[string]parent
	order []noted // oldest first; entries taken or renoted since are skipped
	next  uint64
}{m: map[string]parent{}}

type parent struct {
	sc  trace.SpanContext
	seq uint64
}

type noted struct {
	runID string
	seq   uint64
}

// NoteCommand remembers the trace a command record's headers name for its
// run. Headers without a traceparent change nothing.
func NoteCommand(runID string, headers map[string]string) {
	if headers[traceparent] == "" {
		return
	}
	sc := trace.SpanContextFromContext(Extract(context.Background(), headers))
	if !sc.IsValid() {
		return
	}
	parents.mu.Lock()
	defer parents.mu.Unlock()
	parents.next++
	parents.m[runID] = parent{sc: sc, seq: parents.next}
	parents.order = append(parents.order, noted{runID: runID, seq: parents.next})
	for len(parents.order) > maxParents {
		old := parents.order[0]
		if p, ok := parents.m[old.runID]; ok && p.seq == old.seq {
			delete(parents.m, old.runID)
		}
		parents.order = parents.order[1:]
	}
}

// StartRun starts the span of one drive of run runID by its engine, a child
// of the trace NoteCommand remembered for it (a new trace without one).
func StartRun(ctx context.Context, runID string) (context.Context, trace.Span) {
	parents.mu.Lock()
	p, ok := parents.m[runID]
	delete(parents.m, runID)
	parents.mu.Unlock()
	if ok {
		ctx = trace.ContextWithRemoteSpanContext(ctx, p.sc)
	}
	return Start(ctx, "run", attribute.String("xbot.run_id", runID))
}

// traceparent is the W3C header that names the parent span.
const traceparent = "traceparent"
