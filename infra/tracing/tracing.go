package tracing

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync/atomic"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// instrumentation names xbot's tracer.
const instrumentation = "github.com/xbot-runtime/xbot"

// Enabled says whether env (os.Getenv) asks for traces: an OTLP endpoint
// (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) or
// OTEL_TRACES_EXPORTER=otlp, unless OTEL_SDK_DISABLED=true or
// OTEL_TRACES_EXPORTER=none.
func Enabled(env func(string) string) bool {
	if strings.EqualFold(env("OTEL_SDK_DISABLED"), "true") {
		return false
	}
	switch strings.ToLower(env("OTEL_TRACES_EXPORTER")) {
	case "none":
		return false
	case "otlp":
		return true
	}
	return env("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// Setup installs the process's tracer provider when the environment asks
// for traces (Enabled): OTLP over HTTP, configured by the exporter's OTEL_*
// variables (endpoint, headers, timeout), OTEL_TRACES_SAMPLER and
// OTEL_BSP_*, the resource by OTEL_SERVICE_NAME and
// OTEL_RESOURCE_ATTRIBUTES, service (e.g. "xbot-executor") the name when
// OTEL_SERVICE_NAME is unset. Call the returned function at exit: it sends
// the spans still buffered. Without traces asked for it installs nothing
// and the returned function does nothing.
func Setup(ctx context.Context, service string) (func(context.Context) error, error) {
	if !Enabled(os.Getenv) {
		return func(context.Context) error { return nil }, nil
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("tracing: OTLP exporter: %w", err)
	}
	res, err := resource.Merge(resource.Default(),
		resource.NewSchemaless(attribute.String("service.name", service)))
	if err == nil {
		res, err = resource.Merge(res, envResource(ctx))
	}
	if err != nil {
		return nil, fmt.Errorf("tracing: resource: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	Use(tp)
	return tp.Shutdown, nil
}

// tracer is xbot's tracer. Taken from the global provider before any is
// installed, it follows the one installed later.
var tracer = otel.Tracer(instrumentation)

// installed says whether a tracer provider was installed (Use). Without
// one a span records nothing, and Start makes none: a run's stages and
// calls started one each, a measurable cost of every turn.
var installed atomic.Bool

// none is the span Start returns while no provider is installed.
var none = trace.SpanFromContext(context.Background())

// Use installs tp as the process's tracer provider.
func Use(tp trace.TracerProvider) {
	otel.SetTracerProvider(tp)
	installed.Store(true)
}

// envResource is the resource OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES
// describe (empty when they are unset or malformed).
func envResource(ctx context.Context) *resource.Resource {
	res, err := resource.New(ctx, resource.WithFromEnv())
	if err != nil {
		return resource.Empty()
	}
	return res
}

// Start starts a span named name as a child of ctx's span.
// While no provider is installed it returns ctx as it is and a span that
// records nothing.
func Start(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	if !installed.Load() {
		return ctx, none
	}
	return tracer.Start(ctx, name, trace.WithAttributes(attrs...))
}

// End ends span, recording err (nil: success).
func End(span trace.Span, err error) {
	if err != nil {
		span.SetStatus(codes.Error, "failed")
		span.SetAttributes(attribute.String("error.type", fmt.Sprintf("%T", err)))
	}
	span.End()
}

// w3c is the W3C Trace Context propagator: traceparent and tracestate.
var w3c = propagation.TraceContext{}

// Inject adds the traceparent (and tracestate) of ctx's span to headers;
// without a sampled or remote span it adds nothing.
func Inject(ctx context.Context, headers map[string]string) {
	w3c.Inject(ctx, propagation.MapCarrier(headers))
}

// Extract returns ctx with the remote span headers' traceparent names; ctx
// unchanged when they name none.
func Extract(ctx context.Context, headers map[string]string) context.Context {
	return w3c.Extract(ctx, propagation.MapCarrier(headers))
}

// ExtractHTTP returns ctx with the remote span an incoming request's
// traceparent header names; ctx unchanged when it names none.
func ExtractHTTP(ctx context.Context, h http.Header) context.Context {
	return w3c.Extract(ctx, propagation.HeaderCarrier(h))
}
