package metrics

import (
	"strconv"
	"time"
)

// Stages of the agent loop (xbot_engine_stage_seconds).
const (
	StageModel  = "model"
	StageTools  = "tools"
	StageFinish = "finish"
)

// Streams of the API (xbot_sse_clients, xbot_sse_bytes_total).
const (
	StreamRun     = "run"
	StreamSession = "session"
)

// Caps on the distinct values of the labels whose values callers pass.
var (
	stages  = fixed(StageModel, StageTools, StageFinish)
	streams = fixed(StreamRun, StreamSession)
	// 64 tools is several times the built-ins plus what a deployment adds.
	tools = newCapped(64)
	// 128 routes is about twice the API's operations and documents.
	routes = newCapped(128)
	// 16 views is several times the views xbot has.
	views = newCapped(16)
	// 16 topics is three times the topics xbot reads (a test's come after).
	readTopics = newCapped(16)
)

// ObserveTransaction records one transaction of records records on events
// partition partition that began at start. Call it as the transaction ends;
// `defer metrics.ObserveTransaction(p, n, time.Now())` times the function.
func ObserveTransaction(partition int32, records int, start time.Time) {
	p := partitionLabel(partition)
	transactionSeconds.WithLabelValues(p).Observe(time.Since(start).Seconds())
	transactionRecords.WithLabelValues(p).Observe(float64(records))
}

// CountReadRetry records that a read of topic asked again after a broker
// failed to answer.
func CountReadRetry(topic string) { kafkaReadRetries.WithLabelValues(readTopics.value(topic)).Inc() }

// ObserveStage records one stage (StageModel, StageTools, StageFinish) of
// the agent loop that began at start.
func ObserveStage(stage string, start time.Time) {
	stageSeconds.WithLabelValues(stages.value(stage)).Observe(time.Since(start).Seconds())
}

// ObserveModelCall records a model call that began at start and ended with
// err.
func ObserveModelCall(start time.Time, err error) {
	outcome := "ok"
	if err != nil {
		outcome = "error"
	}
	modelCallSeconds.WithLabelValues(outcome).Observe(time.Since(start).Seconds())
}

// ObserveToolCall records a call of the registered tool named tool that
// began at start.
func ObserveToolCall(tool string, start time.Time) {
	toolCallSeconds.WithLabelValues(tools.value(tool)).Observe(time.Since(start).Seconds())
}

// ObserveProjectorBatch records a poll batch of records records that the
// projector of view applies.
func ObserveProjectorBatch(view string, records int) {
	projectorBatchRecords.WithLabelValues(views.value(view)).Observe(float64(records))
}

// SetProjectorLag records the lag of view on partition after a fetch.
func SetProjectorLag(view string, partition int32, lag int64) {
	projectorLagRecords.WithLabelValues(views.value(view), partitionLabel(partition)).Set(float64(lag))
}

// StreamOpened counts an open UI stream of kind stream (StreamRun,
// StreamSession) until the returned function is called, and returns the
// function that counts the bytes written to it.
func StreamOpened(stream string) (closed func(), wrote func(n int)) {
	s := streams.value(stream)
	g, c := sseClients.WithLabelValues(s), sseBytes.WithLabelValues(s)
	g.Inc()
	return g.Dec, func(n int) { c.Add(float64(n)) }
}

// WriteWaits counts a write request waiting for an intake slot until the
// returned function is called.
func WriteWaits() (done func()) {
	apiWritesWaiting.Inc()
	return apiWritesWaiting.Dec
}

// ObserveRequest records an API request to route (a route template such as
// "GET /v1/runs/{runId}", never a path) answered with code, begun at start.
func ObserveRequest(route string, code int, start time.Time) {
	if route == "" {
		route = "unmatched"
	}
	httpRequestSeconds.WithLabelValues(routes.value(route), strconv.Itoa(code)).Observe(time.Since(start).Seconds())
}

func partitionLabel(p int32) string { return strconv.FormatInt(int64(p), 10) }
