package main

import (
	"context"
	"os"
	"time"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/infra/tracing"
)

// tracingFlushTimeout bounds sending the buffered spans at exit: a collector
// that does not answer in this long must not hold up a stop.
const tracingFlushTimeout = 5 * time.Second

// startTracing installs the tracer provider the OTEL_* variables ask for
// (off without them; infra/tracing); the returned function sends the spans
// still buffered.
func startTracing(ctx context.Context, log *zap.Logger, service string) (func(), error) {
	shutdown, err := tracing.Setup(ctx, service)
	if err != nil {
		return nil, err
	}
	if tracing.Enabled(os.Getenv) {
		log.Info("tracing on: spans go to the OTLP endpoint of the OTEL_EXPORTER_OTLP_* variables", zap.String("service", service))
	}
	return func() {
		sctx, cancel := context.WithTimeout(context.Background(), tracingFlushTimeout)
		defer cancel()
		if err := shutdown(sctx); err != nil {
			log.Warn("tracing: buffered spans not sent at exit", zap.Error(err))
		}
	}, nil
}
