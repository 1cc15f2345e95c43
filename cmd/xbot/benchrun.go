package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"time"

	"github.com/xbot-runtime/xbot/events"
	chinfra "github.com/xbot-runtime/xbot/infra/clickhouse"
	"github.com/xbot-runtime/xbot/services/loadtool/baseline"
)

// maxBaselineEvents caps the events the baselines write: enough for a
// steady rate, bounded so that a huge load does not double its run time.
const maxBaselineEvents = 200_000

// run drives the load, then the baselines on the same servers. It returns a
// report whenever the load ran, with an error when runs failed.
func (b *bench) run(ctx context.Context) (*benchReport, error) {
	c, err := newBenchClient(b.st.Addr(), b.token, b.flags.concurrency)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "xbot bench: %d runs, %d clients, %d turns × %d %s calls, model latency %s\n",
		b.flags.runs, b.flags.concurrency, b.flags.turns, b.flags.toolCalls, b.flags.tool, b.flags.modelLatency)
	l := &benchLoad{b: b, c: c}
	stopProfile, err := startCPUProfile(b.flags.cpuProfile)
	if err != nil {
		return nil, err
	}
	elapsed := l.drive(ctx)
	if err := stopProfile(); err != nil {
		return nil, err
	}
	l.lag.sample(ctx, c) // the lag when the last run completed
	rep := b.newReport(l, elapsed)
	rep.ProjectorLag.CatchUpSec = l.catchUp(ctx)
	var errs []error
	if n := l.failed.Load(); n > 0 {
		errs = append(errs, fmt.Errorf("%d of %d runs failed, first: %w", n, b.flags.runs, firstErr(l.timings)))
	}
	ids := completedIDs(l.timings)
	evs, err := b.loadEvents(ctx, ids)
	if err != nil {
		return rep, errors.Join(append(errs, err)...)
	}
	rep.Runs.Events = len(evs)
	if elapsed > 0 {
		rep.Runs.EventsPerSec = float64(len(evs)) / elapsed.Seconds()
	}
	fmt.Fprintf(os.Stderr, "xbot bench: baselines on %d events\n", min(len(evs), maxBaselineEvents))
	rep.Baselines, err = b.baselines(ctx, evs[:min(len(evs), maxBaselineEvents)])
	return rep, errors.Join(append(errs, err)...)
}

func firstErr(ts []runTiming) error {
	for _, t := range ts {
		if t.err != nil {
			return t.err
		}
	}
	return nil
}

func completedIDs(ts []runTiming) []string {
	var ids []string
	for _, t := range ts {
		if t.err == nil {
			ids = append(ids, t.runID)
		}
	}
	return ids
}

// loadEvents reads the completed runs' events back from the read model.
func (b *bench) loadEvents(ctx context.Context, runIDs []string) ([]baseline.Event, error) {
	rows, err := b.st.Pool.Query(ctx, `SELECT envelope::text FROM run_events WHERE run_id = ANY($1) ORDER BY run_id, seq`, runIDs)
	if err != nil {
		return nil, fmt.Errorf("read the bench's events: %w", err)
	}
	defer rows.Close()
	var out []baseline.Event
	for rows.Next() {
		var raw string
		if err := rows.Scan(&raw); err != nil {
			return nil, err
		}
		env, err := events.Decode([]byte(raw))
		if err != nil {
			return nil, err
		}
		out = append(out, baseline.Event{Envelope: env, Raw: []byte(raw)})
	}
	return out, rows.Err()
}

// baselines run one after another so they do not compete with each other.
func (b *bench) baselines(ctx context.Context, evs []baseline.Event) (benchBaselines, error) {
	var out benchBaselines
	var err error
	name := "xbot_bench_raw_" + b.nonce
	if out.KafkaTxnProduce, err = baseline.Kafka(ctx, b.opts.Kafka, name, evs); err != nil {
		return out, err
	}
	if out.PostgresCopyFrom, err = baseline.Postgres(ctx, b.st.Pool, name, evs); err != nil {
		return out, err
	}
	if b.opts.ClickHouse == nil {
		return out, errors.New("clickhouse baseline: no ClickHouse configured")
	}
	conn, err := chinfra.Connect(ctx, *b.opts.ClickHouse)
	if err != nil {
		return out, fmt.Errorf("clickhouse baseline: %w", err)
	}
	defer func() { _ = conn.Close() }()
	out.ClickHouseInsert, err = baseline.ClickHouse(ctx, conn, name, evs)
	return out, err
}

func (b *bench) newReport(l *benchLoad, elapsed time.Duration) *benchReport {
	f := b.flags
	rep := &benchReport{Config: benchConfig{Runs: f.runs, Concurrency: f.concurrency, Turns: f.turns, ToolCalls: f.toolCalls,
		ModelLatencyMs: ms(f.modelLatency), Tool: f.tool, ToolCommand: f.toolCommand, CPUs: runtime.NumCPU(),
		GoVersion: runtime.Version(), Version: version, Servers: b.servers(), Date: time.Now().UTC().Format(time.RFC3339)}}
	if f.tool == "none" {
		rep.Config.ToolCommand = ""
	}
	rep.Runs.Completed = f.runs - int(l.failed.Load())
	rep.Runs.Failed = int(l.failed.Load())
	rep.Runs.ElapsedSec = elapsed.Seconds()
	rep.Runs.RunsPerSec = float64(rep.Runs.Completed) / elapsed.Seconds()
	var acc, first, done []time.Duration
	for _, t := range l.timings {
		if t.err == nil {
			acc, first, done = append(acc, t.accepted), append(first, t.firstChunk), append(done, t.closed)
		}
	}
	rep.LatencyMs = benchLatencies{Accepted: percentiles(acc), FirstChunk: percentiles(first), Completed: percentiles(done)}
	l.lag.mu.Lock()
	rep.ProjectorLag = benchLag{Max: l.lag.max, End: l.lag.last, Samples: l.lag.samples, Errors: l.lag.errors}
	l.lag.mu.Unlock()
	return rep
}

// servers says which servers were embedded and which external.
func (b *bench) servers() string {
	kind := func(key, embedded string) string {
		if b.s.r.Get(key) != "" {
			return "external"
		}
		return embedded
	}
	return fmt.Sprintf("kafka %s, postgres %s, clickhouse %s", kind("kafka_brokers", "embedded (kfake)"),
		kind("pg_dsn", "embedded"), kind("clickhouse_addr", "embedded"))
}

func percentiles(ds []time.Duration) benchPercentiles {
	if len(ds) == 0 {
		return benchPercentiles{}
	}
	slices.Sort(ds)
	at := func(q float64) float64 { return ms(ds[min(len(ds)-1, int(q*float64(len(ds))))]) }
	return benchPercentiles{P50: at(0.50), P95: at(0.95), P99: at(0.99), Max: ms(ds[len(ds)-1])}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// startCPUProfile profiles the process into path ("" = no profile) until
// the returned function is called.
func startCPUProfile(path string) (func() error, error) {
	if path == "" {
		return func() error { return nil }, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	return func() error {
		pprof.StopCPUProfile()
		return f.Close()
	}, nil
}
