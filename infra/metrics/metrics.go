package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Registry is the process's registry: the Go and process collectors and
// every metric below. The /metrics endpoint and `xbot bench` read it.
var Registry = prometheus.NewRegistry()

// lagRegistry holds xbot_projector_lag_records alone, for GatherLag: a
// sampler reads it several times a second without the cost of the rest.
var lagRegistry = prometheus.NewRegistry()

// Buckets. Latencies span 0.1 ms (a transaction on an in-memory broker) to
// tens of seconds (a model call); counts span one record to a poll's cap.
var (
	commitBuckets  = prometheus.ExponentialBuckets(0.0001, 2, 16) // 0.1 ms … 3.3 s
	callBuckets    = prometheus.ExponentialBuckets(0.001, 2, 17)  // 1 ms … 65 s
	requestBuckets = prometheus.ExponentialBuckets(0.0005, 2, 16) // 0.5 ms … 16 s
	countBuckets   = prometheus.ExponentialBuckets(1, 2, 14)      // 1 … 8192
)

// The metrics. Their help texts are what docs/operations.md says of them.
var (
	transactionSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "xbot_kafka_transaction_seconds",
		Help:    "Time of one transaction of a partition's writer, from its begin to its end (commit or abort), by events partition.",
		Buckets: commitBuckets,
	}, []string{"partition"})
	transactionRecords = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "xbot_kafka_transaction_records",
		Help:    "Records written in one transaction of a partition's writer (events, checkpoints, commands, dead letters), by events partition.",
		Buckets: countBuckets,
	}, []string{"partition"})
	stageSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "xbot_engine_stage_seconds",
		Help:    "Time of one stage of the agent loop (model: safe points, compaction and the model call; tools: a step's tool calls; finish: the completion), by stage.",
		Buckets: callBuckets,
	}, []string{"stage"})
	modelCallSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "xbot_model_call_seconds",
		Help:    "Time of one streamed model call, from the request to its last delta, by outcome (ok or error).",
		Buckets: callBuckets,
	}, []string{"outcome"})
	toolCallSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "xbot_tool_call_seconds",
		Help:    "Time of one tool call in its sandbox, by registered tool name.",
		Buckets: callBuckets,
	}, []string{"tool"})
	projectorBatchRecords = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "xbot_projector_batch_records",
		Help:    "Records (transaction markers included) in one poll batch a projector applies, by view.",
		Buckets: countBuckets,
	}, []string{"view"})
	projectorLagRecords = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "xbot_projector_lag_records",
		Help: "Offsets of the events partition not yet in a view as of its projector's last fetch of it (the last stable offset minus the first offset of the batch applying, or the offset after the batch applied), by view and partition.",
	}, []string{"view", "partition"})
	sseClients = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "xbot_sse_clients",
		Help: "Open UI streams of this API instance, by stream (run or session).",
	}, []string{"stream"})
	sseBytes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "xbot_sse_bytes_total",
		Help: "Bytes written to UI stream clients (SSE frames and keep-alives), by stream (run or session).",
	}, []string{"stream"})
	kafkaReadRetries = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "xbot_kafka_read_retries_total",
		Help: "Times a read of the log asked a partition's offsets again after a broker failed to answer (a restart, a refused or closed connection, a leader moving), by topic.",
	}, []string{"topic"})
	apiWritesWaiting = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "xbot_api_writes_waiting",
		Help: "Write requests (commands) of this API instance waiting for a slot to be prepared in (api_max_concurrent_writes).",
	})
	httpRequestSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "xbot_http_request_seconds",
		Help:    "Time of one API request, from its headers to the handler's return (a stream's whole life), by route template and status code.",
		Buckets: requestBuckets,
	}, []string{"route", "code"})
)

func init() {
	Registry.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		transactionSeconds, transactionRecords, stageSeconds, modelCallSeconds, toolCallSeconds,
		projectorBatchRecords, projectorLagRecords, sseClients, sseBytes, httpRequestSeconds, kafkaReadRetries,
		apiWritesWaiting,
	)
	lagRegistry.MustRegister(projectorLagRecords)
}
