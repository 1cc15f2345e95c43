package agentloop

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/xbot-runtime/xbot/infra/metrics"
	"github.com/xbot-runtime/xbot/infra/tracing"
	"github.com/xbot-runtime/xbot/services/engine/tools"
)

// stage times one stage of the loop (metrics.Stage…) in the metrics and as
// a span; the returned ctx carries the span for the stage's calls.
func stage(ctx context.Context, name string) (context.Context, func()) {
	start := time.Now()
	ctx, span := tracing.Start(ctx, "engine."+name)
	return ctx, func() {
		span.End()
		metrics.ObserveStage(name, start)
	}
}

// modelCall times one model call; call the returned function with its error.
func modelCall(ctx context.Context) func(error) {
	start := time.Now()
	_, span := tracing.Start(ctx, "model.call")
	return func(err error) {
		tracing.End(span, err)
		metrics.ObserveModelCall(start, err)
	}
}

// toolCall times one call of the registered tool name; call the returned
// function with its result.
func toolCall(ctx context.Context, name string) func(tools.Result) {
	start := time.Now()
	_, span := tracing.Start(ctx, "tool.call", attribute.String("xbot.tool", name))
	return func(res tools.Result) {
		if res.ErrorCode != "" {
			span.SetAttributes(attribute.String("xbot.tool_error", res.ErrorCode))
		}
		span.End()
		metrics.ObserveToolCall(name, start)
	}
}
