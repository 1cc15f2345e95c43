package loadtool

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/xbot-runtime/xbot/services/loadtool/baseline"
)

// Report is what `xbot bench` prints as JSON.
type Report struct {
	Config       LoadConfig `json:"config"`
	Runs         RunFigures `json:"runs"`
	LatencyMs    Latencies  `json:"latencyMs"`
	ProjectorLag LagFigures `json:"projectorLag"`
	Baselines    Baselines  `json:"baselines"`
	// Metrics are read from the system's own metrics (metrics.go).
	Metrics MetricFigures `json:"metrics"`
	// CPU is every process's CPU during the load (nil where /proc is
	// unreadable).
	CPU *CPUFigures `json:"cpu,omitempty"`
}

// LoadConfig is the load's shape and where it ran.
type LoadConfig struct {
	Runs           int     `json:"runs"`
	Concurrency    int     `json:"concurrency"`
	Turns          int     `json:"turns"`
	ToolCalls      int     `json:"toolCalls"`
	ModelLatencyMs float64 `json:"modelLatencyMs"`
	Tool           string  `json:"tool"`
	ToolCommand    string  `json:"toolCommand,omitempty"`
	CPUs           int     `json:"cpus"`
	GoVersion      string  `json:"goVersion"`
	// Version is the system's (stack.Options.Version).
	Version string `json:"version"`
	Servers string `json:"servers"`
	// Date is when the load ended (RFC 3339, UTC).
	Date string `json:"date"`
}

// RunFigures are the throughput: from the first create to the last run's end.
type RunFigures struct {
	Completed    int     `json:"completed"`
	Failed       int     `json:"failed"`
	ElapsedSec   float64 `json:"elapsedSec"`
	RunsPerSec   float64 `json:"runsPerSec"`
	Events       int     `json:"events"`
	EventsPerSec float64 `json:"eventsPerSec"`
}

// Latencies are measured from sending the create: its answer (outcome
// accepted), the stream's first event, the stream's [DONE].
type Latencies struct {
	Accepted   Percentiles `json:"accepted"`
	FirstChunk Percentiles `json:"firstChunk"`
	Completed  Percentiles `json:"completed"`
}

// Percentiles of a latency, in milliseconds.
type Percentiles struct {
	P50 float64 `json:"p50"`
	P95 float64 `json:"p95"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

// LagFigures are the views' lag in the system's metrics
// (xbot_projector_lag_records) sampled during the load: the largest lag seen
// and the lag when the last run had completed, per view.
type LagFigures struct {
	Max map[string]int64 `json:"max"`
	End map[string]int64 `json:"end"`
	// CatchUpSec is how long after the end every view's lag reached 0
	// (-1: not within catchUpMax).
	CatchUpSec float64 `json:"catchUpSec"`
	Samples    int     `json:"samples"`
	Errors     int     `json:"errors"`
}

// Baselines are the raw writes of the load's events on the same servers.
type Baselines struct {
	KafkaTxnProduce  baseline.Result `json:"kafkaTransactionalProduce"`
	PostgresCopyFrom baseline.Result `json:"postgresCopyFrom"`
	ClickHouseInsert baseline.Result `json:"clickhouseBatchInsert"`
}

// WriteJSON writes r as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// Markers delimit the section xbot bench owns in a markdown file.
const (
	sectionBegin = "<!-- xbot bench begin -->"
	sectionEnd   = "<!-- xbot bench end -->"
)

// Markdown renders r as the section between the markers.
func (r *Report) Markdown() string {
	c := r.Config
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n### `xbot bench` (%s)\n\n", sectionBegin, c.Date[:min(10, len(c.Date))])
	fmt.Fprintf(&b, "%d runs, %d concurrent clients; each run: %d turns × %d `%s` calls (`%s`), then an answer; "+
		"scripted model latency %g ms per turn. %d CPUs, %s, xbot %s; %s.\n\n",
		c.Runs, c.Concurrency, c.Turns, c.ToolCalls, c.Tool, c.ToolCommand, c.ModelLatencyMs, c.CPUs, c.GoVersion,
		c.Version, c.Servers)
	b.WriteString("| figure | value |\n|---|---|\n")
	row := func(name, format string, args ...any) {
		fmt.Fprintf(&b, "| %s | "+format+" |\n", append([]any{name}, args...)...)
	}
	row("runs completed / failed", "%d / %d in %.1f s", r.Runs.Completed, r.Runs.Failed, r.Runs.ElapsedSec)
	row("runs/s", "%.1f", r.Runs.RunsPerSec)
	row("events/s (end to end, in Postgres)", "%.0f (%d events)", r.Runs.EventsPerSec, r.Runs.Events)
	lat := func(name string, p Percentiles) {
		row(name+" p50 / p95 / p99 / max", "%.1f / %.1f / %.1f / %.1f ms", p.P50, p.P95, p.P99, p.Max)
	}
	lat("create → accepted", r.LatencyMs.Accepted)
	lat("create → first SSE chunk", r.LatencyMs.FirstChunk)
	lat("create → run completed ([DONE])", r.LatencyMs.Completed)
	row("projector lag max (records)", "%s", lagText(r.ProjectorLag.Max))
	row("projector lag at the end (records)", "%s", lagText(r.ProjectorLag.End))
	row("projectors caught up (lag 0) after the end", "%.1f s", r.ProjectorLag.CatchUpSec)
	m := r.Metrics
	row("partition transactions: p50 / p95 / p99 / mean", "%.2f / %.2f / %.2f / %.2f ms (%d transactions)",
		m.CommitMs.P50, m.CommitMs.P95, m.CommitMs.P99, m.CommitMs.Mean, m.Transactions)
	row("records per transaction (mean)", "%.1f", m.RecordsPerTransaction)
	row("Postgres pool: connections handed out / waited for (all waits)", "%d / %d (%.0f ms) of %d connections",
		m.PoolAcquires, m.PoolWaited, m.PoolWaitMs, m.PoolMaxConns)
	base := func(name string, res baseline.Result) {
		row(name, "%.0f events/s (%d events)", res.EventsPerSec, res.Events)
	}
	base("baseline: franz-go transactional produce (50/txn)", r.Baselines.KafkaTxnProduce)
	base("baseline: pgx CopyFrom (1000/batch)", r.Baselines.PostgresCopyFrom)
	base("baseline: clickhouse-go batch insert (1000/batch)", r.Baselines.ClickHouseInsert)
	b.WriteString(r.CPU.markdown())
	b.WriteString("\nLatencies count from sending the create. Generated by `xbot bench`; edits inside the markers are overwritten.\n")
	b.WriteString(sectionEnd + "\n")
	return b.String()
}

func lagText(m map[string]int64) string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	slices.Sort(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s %s", n, thousands(m[n]))
	}
	return strings.Join(parts, ", ")
}

// newReport computes the figures of the load that ended after elapsed.
func (t *tool) newReport(l *load, elapsed time.Duration) *Report {
	o := t.opts
	rep := &Report{Config: LoadConfig{Runs: o.Runs, Concurrency: o.Concurrency, Turns: o.Turns, ToolCalls: o.ToolCalls,
		ModelLatencyMs: ms(o.ModelLatency), Tool: o.Tool, ToolCommand: o.ToolCommand, CPUs: runtime.NumCPU(),
		GoVersion: runtime.Version(), Version: t.started.Version, Servers: t.sys.Servers,
		Date: time.Now().UTC().Format(time.RFC3339)}}
	if o.Tool == "none" {
		rep.Config.ToolCommand = ""
	}
	rep.Runs.Completed = o.Runs - int(l.failed.Load())
	rep.Runs.Failed = int(l.failed.Load())
	rep.Runs.ElapsedSec = elapsed.Seconds()
	rep.Runs.RunsPerSec = float64(rep.Runs.Completed) / elapsed.Seconds()
	var acc, first, done []time.Duration
	for _, rt := range l.timings {
		if rt.err == nil {
			acc, first, done = append(acc, rt.accepted), append(first, rt.firstChunk), append(done, rt.closed)
		}
	}
	rep.LatencyMs = Latencies{Accepted: percentiles(acc), FirstChunk: percentiles(first), Completed: percentiles(done)}
	l.lag.mu.Lock()
	rep.ProjectorLag = LagFigures{Max: l.lag.max, End: l.lag.last, Samples: l.lag.samples, Errors: l.lag.errors}
	l.lag.mu.Unlock()
	return rep
}

func percentiles(ds []time.Duration) Percentiles {
	if len(ds) == 0 {
		return Percentiles{}
	}
	slices.Sort(ds)
	at := func(q float64) float64 { return ms(ds[min(len(ds)-1, int(q*float64(len(ds))))]) }
	return Percentiles{P50: at(0.50), P95: at(0.95), P99: at(0.99), Max: ms(ds[len(ds)-1])}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
