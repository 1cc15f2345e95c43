package loadtool

import (
	"math"

	"github.com/xbot-runtime/xbot/infra/metrics"
)

// MetricFigures are read from the system's own metrics (infra/metrics), the
// ones its /metrics endpoint serves, over the load: from the first create
// to the last run's end.
type MetricFigures struct {
	// Transactions the partition writers ended (xbot_kafka_transaction_*).
	Transactions uint64 `json:"transactions"`
	// RecordsPerTransaction is their mean size in records.
	RecordsPerTransaction float64 `json:"recordsPerTransaction"`
	// CommitMs is a transaction's time, from its begin to its end.
	CommitMs HistogramFigures `json:"commitMs"`
	// PoolAcquires are the connections the system's Postgres pools handed
	// out (pgxpool_acquire_count); PoolWaited those that found none idle
	// and waited (pgxpool_empty_acquire), PoolWaitMs for how long in all
	// (pgxpool_empty_acquire_wait_time_ns), and PoolMaxConns the pools' size.
	PoolAcquires uint64  `json:"poolAcquires"`
	PoolWaited   uint64  `json:"poolWaited"`
	PoolWaitMs   float64 `json:"poolWaitMs"`
	PoolMaxConns uint64  `json:"poolMaxConns"`
	// Error says why the metrics could not be read ("" when they were).
	Error string `json:"error,omitempty"`
}

// HistogramFigures are a histogram's mean and quantiles, in milliseconds;
// the quantiles are estimated within the histogram's buckets (each twice
// the one before), as Prometheus's histogram_quantile does.
type HistogramFigures struct {
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
}

// metricsMark is the system's metrics when the load began.
type metricsMark struct {
	fams metrics.Families
	err  error
}

func markMetrics() metricsMark {
	fams, err := metrics.Gather()
	return metricsMark{fams: fams, err: err}
}

// since returns the figures of what the metrics recorded after m.
func (m metricsMark) since() MetricFigures {
	now, err := metrics.Gather()
	if err = firstOf(m.err, err); err != nil {
		return MetricFigures{Error: err.Error()}
	}
	const seconds, records = "xbot_kafka_transaction_seconds", "xbot_kafka_transaction_records"
	commit := now.Histogram(seconds).Minus(m.fams.Histogram(seconds))
	size := now.Histogram(records).Minus(m.fams.Histogram(records))
	grew := func(name string) float64 { return now.Value(name) - m.fams.Value(name) }
	return MetricFigures{Transactions: size.Count, RecordsPerTransaction: size.Mean(), CommitMs: msFigures(commit),
		PoolAcquires: uint64(grew("pgxpool_acquire_count")), PoolWaited: uint64(grew("pgxpool_empty_acquire")),
		PoolWaitMs: grew("pgxpool_empty_acquire_wait_time_ns") / 1e6, PoolMaxConns: uint64(now.Value("pgxpool_max_conns"))}
}

func msFigures(h metrics.Histogram) HistogramFigures {
	at := func(q float64) float64 {
		if v := h.Quantile(q); !math.IsNaN(v) {
			return v * 1000
		}
		return 0
	}
	return HistogramFigures{Mean: h.Mean() * 1000, P50: at(0.50), P95: at(0.95), P99: at(0.99)}
}

// metricLags reads every view's lag from the metrics: the sum over the
// events partitions of xbot_projector_lag_records, the offsets not yet in
// each view as of its last fetch.
func metricLags() (map[string]int64, error) {
	fams, err := metrics.GatherLag()
	if err != nil {
		return nil, err
	}
	lags := map[string]int64{}
	if f, ok := fams["xbot_projector_lag_records"]; ok {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "view" {
					lags[l.GetValue()] += int64(m.GetGauge().GetValue())
				}
			}
		}
	}
	return lags, nil
}

func firstOf(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
