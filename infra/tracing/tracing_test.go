package tracing_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"github.com/xbot-runtime/xbot/infra/tracing"
)

func TestTracesAreOffUnlessTheEnvironmentAsks(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		env  map[string]string
		want bool
	}{
		{map[string]string{}, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4318/v1/traces"}, true},
		{map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, true},
		{map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, false},
		{map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "otlp"}, false},
	} {
		if got := tracing.Enabled(func(k string) string { return tc.env[k] }); got != tc.want {
			t.Errorf("Enabled(%v) = %v, want %v", tc.env, got, tc.want)
		}
	}
}

func TestACommandsTraceparentBecomesItsRunsParent(t *testing.T) {
	t.Parallel()
	const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	tracing.NoteCommand("run-traced", map[string]string{"traceparent": parent, "xbot-cmd-mac": "x"})
	ctx, span := tracing.StartRun(context.Background(), "run-traced")
	defer span.End()
	// The no-op provider keeps the remote parent as the context's span.
	sc := trace.SpanContextFromContext(ctx)
	if sc.TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" {
		t.Fatalf("the run's trace is %s, want the command's", sc.TraceID())
	}
	headers := map[string]string{}
	tracing.Inject(ctx, headers)
	if headers["traceparent"] != parent {
		t.Errorf("Inject wrote %q, want %q", headers["traceparent"], parent)
	}
	// Taken once: a later drive of the run starts a trace of its own.
	ctx2, span2 := tracing.StartRun(context.Background(), "run-traced")
	defer span2.End()
	if trace.SpanContextFromContext(ctx2).IsValid() {
		t.Error("a second drive reused the command's trace")
	}
}
