package loadtool

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"runtime/pprof"
	"slices"

	"github.com/xbot-runtime/xbot/events"
	chinfra "github.com/xbot-runtime/xbot/infra/clickhouse"
	"github.com/xbot-runtime/xbot/services/loadtool/baseline"
	"github.com/xbot-runtime/xbot/services/stack"
)

// maxBaselineEvents caps the events the baselines write: enough for a
// steady rate, bounded so that a huge load does not double its run time.
const maxBaselineEvents = 200_000

// System is a started system the load runs against.
type System struct {
	// Stack is the system: the load calls its API and reads its Postgres.
	Stack *stack.Stack
	// Servers says, for the report, which servers are embedded and which
	// external (e.g. "kafka embedded (kfake), postgres embedded, clickhouse
	// external").
	Servers string
}

// Starter starts the system the load runs against. It must call configure
// with the system's options as the last change before stack.Start: configure
// registers the load's agent and bearer token, and the baselines write to
// the Kafka and ClickHouse those options name. The caller of Run stops the
// system after Run returns.
type Starter func(ctx context.Context, configure func(*stack.Options) error) (System, error)

// Run starts a system with start, drives the load o describes against it,
// runs the baselines on the same servers and writes the report as o says
// (JSON to o.JSONPath or stdout, the table to stderr and o.MarkdownPath). It
// returns the report whenever the load ran, with an error when runs failed
// or the report could not be written; the whole of it is bounded by
// o.Timeout.
func Run(ctx context.Context, o Options, start Starter) (*Report, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	t := newTool(o)
	sys, err := start(ctx, t.configure)
	if err != nil {
		return nil, err
	}
	if t.started == nil || sys.Stack == nil {
		return nil, errors.New("loadtool: the starter returned no stack or did not apply configure")
	}
	t.sys = sys
	rep, runErr := t.run(ctx)
	if rep == nil {
		return nil, runErr
	}
	return rep, errors.Join(runErr, o.write(rep, sectionBegin, sectionEnd))
}

// run drives the load, then the baselines on the same servers. It returns a
// report whenever the load ran, with an error when runs failed.
func (t *tool) run(ctx context.Context) (*Report, error) {
	c, err := newClient(t.sys.Stack.Addr(), t.token, t.opts.Concurrency)
	if err != nil {
		return nil, err
	}
	o := t.opts
	fmt.Fprintf(os.Stderr, "xbot bench: %d runs, %d clients, %d turns × %d %s calls, model latency %s\n",
		o.Runs, o.Concurrency, o.Turns, o.ToolCalls, o.Tool, o.ModelLatency)
	l := &load{t: t, c: c}
	l.lag.views = slices.Collect(maps.Keys(t.sys.Stack.Projectors))
	stopProfile, err := startCPUProfile(o.CPUProfile)
	if err != nil {
		return nil, err
	}
	mark := markMetrics()
	cpu := startCPUFigures()
	elapsed := l.drive(ctx)
	cpuFigures := cpu()
	if err := stopProfile(); err != nil {
		return nil, err
	}
	l.lag.sample() // the lag when the last run completed
	rep := t.newReport(l, elapsed)
	rep.Metrics = mark.since()
	rep.CPU = cpuFigures.perRun(rep.Runs.Completed)
	rep.ProjectorLag.CatchUpSec = l.catchUp(ctx)
	var errs []error
	if n := l.failed.Load(); n > 0 {
		errs = append(errs, fmt.Errorf("%d of %d runs failed, first: %w", n, o.Runs, firstErr(l.timings)))
	}
	if l.viewsErr != nil {
		errs = append(errs, l.viewsErr)
	}
	evs, err := t.loadEvents(ctx, completedIDs(l.timings))
	if err != nil {
		return rep, errors.Join(append(errs, err)...)
	}
	rep.Runs.Events = len(evs)
	if elapsed > 0 {
		rep.Runs.EventsPerSec = float64(len(evs)) / elapsed.Seconds()
	}
	fmt.Fprintf(os.Stderr, "xbot bench: baselines on %d events\n", min(len(evs), maxBaselineEvents))
	rep.Baselines, err = t.baselines(ctx, evs[:min(len(evs), maxBaselineEvents)])
	return rep, errors.Join(append(errs, err)...)
}

func firstErr(ts []runTiming) error {
	for _, rt := range ts {
		if rt.err != nil {
			return rt.err
		}
	}
	return nil
}

func completedIDs(ts []runTiming) []string {
	var ids []string
	for _, rt := range ts {
		if rt.err == nil {
			ids = append(ids, rt.runID)
		}
	}
	return ids
}

// loadEvents reads the completed runs' events back from the read model.
func (t *tool) loadEvents(ctx context.Context, runIDs []string) ([]baseline.Event, error) {
	rows, err := t.sys.Stack.Pool.Query(ctx, `SELECT envelope::text FROM run_events WHERE run_id = ANY($1) ORDER BY run_id, seq`, runIDs)
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
func (t *tool) baselines(ctx context.Context, evs []baseline.Event) (Baselines, error) {
	var out Baselines
	var err error
	name := "xbot_bench_raw_" + t.nonce
	if out.KafkaTxnProduce, err = baseline.Kafka(ctx, t.started.Kafka, name, evs); err != nil {
		return out, err
	}
	if out.PostgresCopyFrom, err = baseline.Postgres(ctx, t.sys.Stack.Pool, name, evs); err != nil {
		return out, err
	}
	if t.started.ClickHouse == nil {
		return out, errors.New("clickhouse baseline: no ClickHouse configured")
	}
	conn, err := chinfra.Connect(ctx, *t.started.ClickHouse)
	if err != nil {
		return out, fmt.Errorf("clickhouse baseline: %w", err)
	}
	defer func() { _ = conn.Close() }()
	out.ClickHouseInsert, err = baseline.ClickHouse(ctx, conn, name, evs)
	return out, err
}

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
