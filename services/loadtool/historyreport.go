package loadtool

import (
	"encoding/json"
	"io"
	"runtime"
	"slices"
	"time"
)

// HistoryReport is what `xbot bench --history` prints as JSON.
type HistoryReport struct {
	Config HistoryConfig `json:"config"`
	// Processes are every process the measurement uses, and what each
	// runs.
	Processes []string      `json:"processes"`
	Sizes     []HistorySize `json:"sizes"`
	// Fit is each figure's growth, fitted over the sizes measured.
	Fit []HistoryFit `json:"fit"`
}

// HistoryConfig is how the histories were built and where.
type HistoryConfig struct {
	Sizes       []int64 `json:"sizes"`
	Reps        int     `json:"reps"`
	Session     int     `json:"session"`
	Window      int     `json:"window"`
	Partitions  int     `json:"partitions"`
	Builder     string  `json:"builder"`
	HistoryRuns string  `json:"historyRuns"`
	CPUs        int     `json:"cpus"`
	GoVersion   string  `json:"goVersion"`
	Version     string  `json:"version"`
	Servers     string  `json:"servers"`
	// Date is when the measurement ended (RFC 3339, UTC).
	Date string `json:"date"`
}

// HistorySize are the figures of one history. Every Sample holds one value
// per repetition.
type HistorySize struct {
	TargetEvents int64 `json:"targetEvents"`
	// Events and Runs are what the events topic held when it was measured
	// (counted from the system's start); NotCompleted of the runs ended
	// otherwise.
	Events       int64 `json:"events"`
	Runs         int64 `json:"runs"`
	NotCompleted int64 `json:"notCompleted"`
	// BuildSec is how long growing to this size took.
	BuildSec float64 `json:"buildSec"`
	// Takeover: from a fresh executor process's start until it owns every
	// partition, and until every partition has answered a command.
	TakeoverAssignedMs Sample `json:"takeoverAssignedMs"`
	TakeoverReadyMs    Sample `json:"takeoverReadyMs"`
	// The executor's memory once ready: live heap after a GC, RSS, peak RSS.
	ExecutorHeapMB    Sample `json:"executorHeapMB"`
	ExecutorRSSMB     Sample `json:"executorRssMB"`
	ExecutorPeakRSSMB Sample `json:"executorPeakRssMB"`
	// From the command to the new run's committed end: a fresh run, the
	// follow-up that makes a session's second run, the follow-up of the
	// long session (SessionRuns runs long after the last one).
	FreshRunMs        Sample `json:"freshRunMs"`
	FollowUpMs        Sample `json:"followUpMs"`
	SessionFollowUpMs Sample `json:"sessionFollowUpMs"`
	SessionRuns       int    `json:"sessionRuns"`
	// The follow-ups' medians less the fresh run's.
	FollowUpExtraMs        float64 `json:"followUpExtraMs"`
	SessionFollowUpExtraMs float64 `json:"sessionFollowUpExtraMs"`
	// A fresh API process: its live heap just after it started and while it
	// serves one stream of a live run (StreamRunLive: the run had not ended when it was
	// read), its RSS and peak RSS then.
	APIHeapIdleMB   float64 `json:"apiHeapIdleMB"`
	APIHeapStreamMB float64 `json:"apiHeapStreamMB"`
	APIRSSMB        float64 `json:"apiRssMB"`
	APIPeakRSSMB    float64 `json:"apiPeakRssMB"`
	StreamRunLive   bool    `json:"streamRunLive"`
}

// Sample is a figure's values, one per repetition, and their median.
type Sample struct {
	Median float64   `json:"median"`
	Values []float64 `json:"values"`
}

func (s *Sample) add(v float64) {
	s.Values = append(s.Values, v)
	s.Median = median(s.Values)
}

func (s Sample) median() float64 { return s.Median }

func median(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	sorted := slices.Sorted(slices.Values(vs))
	if n := len(sorted); n%2 == 0 {
		return (sorted[n/2-1] + sorted[n/2]) / 2
	}
	return sorted[len(sorted)/2]
}

func mb(b uint64) float64 { return float64(b) / (1 << 20) }

// HistoryFit is a figure fitted as Base + Per100k × (events / 100,000) by
// least squares over the sizes' medians, and its growth from the smallest
// history to the largest, in percent.
type HistoryFit struct {
	Figure    string  `json:"figure"`
	Unit      string  `json:"unit"`
	Base      float64 `json:"base"`
	Per100k   float64 `json:"per100kEvents"`
	GrowthPct float64 `json:"growthPct"`
}

// fitted are the figures fitted, in the order of the table.
var fitted = []struct {
	name, unit string
	get        func(HistorySize) float64
}{
	{"takeover until assigned", "ms", func(s HistorySize) float64 { return s.TakeoverAssignedMs.Median }},
	{"takeover until ready", "ms", func(s HistorySize) float64 { return s.TakeoverReadyMs.Median }},
	{"executor live heap", "MB", func(s HistorySize) float64 { return s.ExecutorHeapMB.Median }},
	{"executor peak RSS", "MB", func(s HistorySize) float64 { return s.ExecutorPeakRSSMB.Median }},
	{"fresh run", "ms", func(s HistorySize) float64 { return s.FreshRunMs.Median }},
	{"follow-up, 2-run session", "ms", func(s HistorySize) float64 { return s.FollowUpMs.Median }},
	{"follow-up, long session", "ms", func(s HistorySize) float64 { return s.SessionFollowUpMs.Median }},
	{"API heap, one live stream", "MB", func(s HistorySize) float64 { return s.APIHeapStreamMB }},
	{"API peak RSS", "MB", func(s HistorySize) float64 { return s.APIPeakRSSMB }},
}

// fit fills Fit from the sizes measured (at least two).
func (r *HistoryReport) fit() {
	if len(r.Sizes) < 2 {
		return
	}
	xs := make([]float64, len(r.Sizes))
	for i, s := range r.Sizes {
		xs[i] = float64(s.Events) / 100_000
	}
	r.Fit = nil
	for _, f := range fitted {
		ys := make([]float64, len(r.Sizes))
		for i, s := range r.Sizes {
			ys[i] = f.get(s)
		}
		base, slope := leastSquares(xs, ys)
		growth := 0.0
		if ys[0] != 0 {
			growth = (ys[len(ys)-1] - ys[0]) / ys[0] * 100
		}
		r.Fit = append(r.Fit, HistoryFit{Figure: f.name, Unit: f.unit, Base: base, Per100k: slope, GrowthPct: growth})
	}
}

// leastSquares fits y = a + b·x.
func leastSquares(xs, ys []float64) (a, b float64) {
	n := float64(len(xs))
	var sx, sy, sxx, sxy float64
	for i := range xs {
		sx, sy, sxx, sxy = sx+xs[i], sy+ys[i], sxx+xs[i]*xs[i], sxy+xs[i]*ys[i]
	}
	if d := n*sxx - sx*sx; d != 0 {
		b = (n*sxy - sx*sy) / d
	}
	return (sy - b*sx) / n, b
}

// WriteJSON writes r as indented JSON.
func (r *HistoryReport) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

func (hs *history) newReport() *HistoryReport {
	h := hs.h
	return &HistoryReport{
		Config: HistoryConfig{Sizes: h.Sizes, Reps: h.Reps, Session: h.Session, Window: h.Window,
			Partitions: hs.b.Partitions(),
			Builder: "signed CreateRun commands produced straight to the commands topic (as the API's command sender " +
				"does), run by a real executor in the bench process",
			HistoryRuns: "one scripted turn, no tool, no model latency",
			CPUs:        runtime.NumCPU(), GoVersion: runtime.Version(), Version: hs.started.Version,
			Servers: hs.sys.Servers, Date: time.Now().UTC().Format(time.RFC3339)},
		Processes: []string{
			"xbot bench: the embedded Kafka when embedded, the API and the Postgres projector the measurement " +
				"drives, and the builder's executor while the history grows (stopped before anything is measured)",
			"PostgreSQL and ClickHouse servers, as `xbot bench` starts them (" + hs.sys.Servers + "); " +
				"nothing writes to ClickHouse in this mode",
			"the measured executor: a fresh `xbot bench --history-child` process per takeover; the last one of each " +
				"size runs the fresh runs and follow-ups",
			"the measured API: a fresh `xbot bench --history-child` process per size, serving the one stream",
		},
	}
}
