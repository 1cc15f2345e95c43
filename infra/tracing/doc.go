// Package tracing traces a run with OpenTelemetry: the API's request, the
// command it sends, and, in the executor, the run's engine stages and its
// model and tool calls, in one trace.
//
// It is off unless the standard OTEL_* variables ask for it (Setup); off,
// every span is OpenTelemetry's no-op and costs next to nothing. The trace
// crosses Kafka in the command record's W3C traceparent header (Inject,
// Extract): the header is not signed, so a forged one can only name a wrong
// parent span; it changes nothing the executor decides.
//
// Spans carry no prompt, output, argument or tenant: the run id (the trace's
// subject), stage and tool names, and outcomes.
package tracing
