package tracing_test

import (
	"context"
	"testing"

	"github.com/xbot-runtime/xbot/infra/tracing"
)

// Off (no provider installed), Start makes no span: this is what every
// stage, call and request pays without OTEL_* set.
func BenchmarkStartEndOff(b *testing.B) {
	ctx := context.Background()
	for b.Loop() {
		_, span := tracing.Start(ctx, "engine.model")
		tracing.End(span, nil)
	}
}
