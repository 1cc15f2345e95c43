package systemtest_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	nooptrace "go.opentelemetry.io/otel/trace/noop"

	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/infra/tracing"
	"github.com/xbot-runtime/xbot/services/engine/profile"
)

// TestARunIsOneTrace follows a run from the API's request through the
// command record's traceparent header into the executor's engine: one trace
// holds the request, the command, the run and its stages, model and tool
// calls. Not parallel: it installs the process's tracer provider.
func TestARunIsOneTrace(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	tracing.Use(tp)
	t.Cleanup(func() {
		tracing.Use(nooptrace.NewTracerProvider())
		_ = tp.Shutdown(context.Background())
	})
	agent := profile.Profile{ID: "traced", Model: profile.ModelScripted, Tools: allTools, Script: []profile.Turn{
		{ToolCalls: call1("shell", `{"command":"true"}`)}, {Text: "done"}}}
	_, st, _ := agentEnv(t, agent)
	runID := runUntil(t, st, "traced", "trace me", "trace-1", "completed", 10*time.Second)

	var run sdktrace.ReadOnlySpan
	eventually.Succeeds(t, 10*time.Second, "the run's span ended", func() error {
		for _, s := range rec.Ended() {
			if s.Name() == "run" && hasAttr(s, "xbot.run_id", runID) {
				run = s
				return nil
			}
		}
		return fmt.Errorf("no run span among %d", len(rec.Ended()))
	})
	trace := map[string][]sdktrace.ReadOnlySpan{}
	for _, s := range rec.Ended() {
		if s.SpanContext().TraceID() == run.SpanContext().TraceID() {
			trace[s.Name()] = append(trace[s.Name()], s)
		}
	}
	for _, name := range []string{"POST /v1/runs", "command CreateRun", "engine.model", "model.call", "engine.tools",
		"tool.call", "engine.finish"} {
		if len(trace[name]) == 0 {
			t.Errorf("the run's trace has no %q span; it has %v", name, names(trace))
		}
	}
	if cmd := trace["command CreateRun"]; len(cmd) == 1 && run.Parent().SpanID() != cmd[0].SpanContext().SpanID() {
		t.Errorf("the run's span is not the command's child: parent %s, command %s", run.Parent().SpanID(),
			cmd[0].SpanContext().SpanID())
	}
	if tools := trace["tool.call"]; len(tools) > 0 && !hasAttr(tools[0], "xbot.tool", "shell") {
		t.Errorf("tool.call attributes %v", tools[0].Attributes())
	}
}

func hasAttr(s sdktrace.ReadOnlySpan, key, value string) bool {
	for _, a := range s.Attributes() {
		if a.Key == attribute.Key(key) && a.Value.AsString() == value {
			return true
		}
	}
	return false
}

func names(m map[string][]sdktrace.ReadOnlySpan) []string {
	out := make([]string, 0, len(m))
	for n := range m {
		out = append(out, n)
	}
	return out
}
