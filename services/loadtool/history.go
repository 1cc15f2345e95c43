package loadtool

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/services/api/client"
	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/stack"
)

// The agents of the history mode: every run of the history, fresh run and
// follow-up is one scripted turn with no tool; the stream agent answers
// slowly, so its run is live while its stream is measured.
const (
	historyAgent = "bench-history"
	streamAgent  = "bench-history-stream"
	// streamDelta is the stream agent's pause before each of its deltas.
	streamDelta = 250 * time.Millisecond
)

func historyProfiles() []profile.Profile {
	limits := profile.Limits{MaxTurns: 2, MaxWallTime: time.Hour}
	return []profile.Profile{
		{ID: historyAgent, Model: profile.ModelScripted, Limits: limits,
			Script: []profile.Turn{{Text: "history run done", ChunkChars: 64}}},
		{ID: streamAgent, Model: profile.ModelScripted, Limits: limits,
			Script: []profile.Turn{{Text: "a slow answer, streamed live", ChunkChars: 4, Delay: streamDelta}}},
	}
}

// history is one invocation of the history mode.
type history struct {
	o       Options
	h       HistoryOptions
	token   string
	nonce   string
	started *stack.Options // the system's options, as configure left them
	sys     System
	b       *HistoryBuilder
	c       *client.Client
	child   []string
	log     *zap.Logger
	// session is the long session's latest run, sessionRuns its length.
	session     string
	sessionRuns int
	seq         int // numbers the API's runs, for their keys
}

// RunHistory starts a system with start and measures, for each size of
// h.Sizes, the costs that grow with history (HistorySize), growing the
// history from one size to the next with real runs (HistoryBuilder). It
// writes the report as o says (JSON to o.JSONPath or stdout, the table to
// stderr and to the history section of o.MarkdownPath) and returns it, with
// an error when a measurement failed; the whole of it is bounded by
// o.Timeout.
func RunHistory(ctx context.Context, o Options, h HistoryOptions, start Starter) (*HistoryReport, error) {
	if err := errors.Join(o.Validate(), h.Validate()); err != nil {
		return nil, err
	}
	child, err := h.childCommand()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	hs := &history{o: o, h: h, token: newToken(), nonce: newToken()[4:12], child: child}
	sys, err := start(ctx, hs.configure)
	if err != nil {
		return nil, err
	}
	if hs.started == nil || sys.Stack == nil {
		return nil, errors.New("loadtool: the starter returned no stack or did not apply configure")
	}
	hs.sys, hs.log = sys, hs.started.Logger
	rep, runErr := hs.run(ctx)
	if rep == nil {
		return nil, runErr
	}
	rep.Config.Date = time.Now().UTC().Format(time.RFC3339)
	return rep, errors.Join(runErr, o.write(rep, historyBegin, historyEnd))
}

// configure registers the history's agents and token and runs, besides the
// API, only the Postgres projector: the ClickHouse and IM views measure
// nothing here and would only take CPU. The system's own executor is there
// for the starter to see the system ready; run stops it.
func (hs *history) configure(o *stack.Options) error {
	if err := withLoad(o, hs.token, historyProfiles()...); err != nil {
		return err
	}
	o.Components = []stack.Component{stack.API, stack.Executor, stack.ProjectorPostgres}
	started := *o
	hs.started = &started
	return nil
}

// run measures every size in turn; the report holds the sizes measured
// when one fails.
func (hs *history) run(ctx context.Context) (*HistoryReport, error) {
	// Every executor of the measurement is started here, so that each
	// takeover starts from a stopped owner.
	hs.sys.Stack.Executor.Kill()
	b, err := NewHistoryBuilder(ctx, HistoryBuilderConfig{Kafka: hs.started.Kafka, CommandKeys: hs.sys.Stack.CommandKeys(),
		TenantID: tenant, AgentID: historyAgent, Window: hs.h.Window, Logger: hs.log, Progress: growProgress()})
	if err != nil {
		return nil, err
	}
	defer b.Close()
	hs.b = b
	if hs.c, err = newClient(hs.sys.Stack.Addr(), hs.token, 4); err != nil {
		return nil, err
	}
	rep := hs.newReport()
	for i, size := range hs.h.Sizes {
		fmt.Fprintf(os.Stderr, "xbot bench --history: growing the history to %s events\n", thousands(size))
		fig, err := hs.measureSize(ctx, i, size)
		rep.Sizes = append(rep.Sizes, fig)
		if err != nil {
			return rep, fmt.Errorf("history of %s events: %w", thousands(size), err)
		}
	}
	rep.fit()
	return rep, nil
}

// measureSize grows the history to target events and measures it.
func (hs *history) measureSize(ctx context.Context, i int, target int64) (HistorySize, error) {
	fig := HistorySize{TargetEvents: target}
	if err := hs.grow(ctx, i, target, &fig); err != nil {
		return fig, err
	}
	fmt.Fprintf(os.Stderr, "xbot bench --history: %s events, %s runs; measuring\n", thousands(fig.Events), thousands(fig.Runs))
	ex, err := hs.takeovers(ctx, &fig)
	if err != nil {
		return fig, err
	}
	err = errors.Join(hs.latencies(ctx, &fig), hs.streamMemory(ctx, &fig))
	return fig, errors.Join(err, ex.stop())
}

// grow runs a builder's executor in this process until the history holds
// target events and a new long session, then stops it and
// waits for the Postgres view to catch up, so neither competes with what is
// measured next.
func (hs *history) grow(ctx context.Context, i int, target int64, fig *HistorySize) error {
	began := time.Now()
	opts := *hs.started
	opts.Components, opts.ExecutorID = []stack.Component{stack.Executor}, fmt.Sprintf("history-builder-%d", i)
	opts.CommandKeys = hs.sys.Stack.CommandKeys() // the system's, generated at its start when none was configured
	ex, err := stack.Start(ctx, opts)
	if err != nil {
		return err
	}
	defer ex.Stop(context.Background())
	if err := hs.ownsAll(ctx, ex); err != nil {
		return err
	}
	if err := hs.b.Grow(ctx, target); err != nil {
		return err
	}
	// A new session at each size, made in one go with the history behind
	// it: a session carried over from a smaller size would have its runs in
	// several places of the log, apart by the history grown in between. Its
	// creates wait for their outcomes in the read model, so that must have
	// caught up with the history first.
	if err := hs.viewCaughtUp(ctx); err != nil {
		return err
	}
	if err := hs.buildSession(ctx); err != nil {
		return err
	}
	fig.BuildSec = time.Since(began).Seconds()
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	ex.Stop(sctx)
	cancel()
	fig.Events = hs.b.Events()
	fig.Runs, fig.NotCompleted = hs.b.Runs()
	return hs.viewCaughtUp(ctx)
}

// ownsAll waits until ex's executor owns every partition.
func (hs *history) ownsAll(ctx context.Context, ex *stack.Stack) error {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for len(ex.Executor.Partitions()) < hs.b.Partitions() {
		select {
		case <-ctx.Done():
			return fmt.Errorf("the builder's executor owns %d of %d partitions: %w", len(ex.Executor.Partitions()),
				hs.b.Partitions(), ctx.Err())
		case <-tick.C:
		}
	}
	return nil
}

// viewCaughtUp waits until the Postgres view has applied every event.
func (hs *history) viewCaughtUp(ctx context.Context) error {
	pg := hs.sys.Stack.Projectors["postgres"]
	if pg == nil {
		return errors.New("history: the system runs no Postgres projector")
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		lag, err := pg.Lag(ctx)
		if err == nil && lag.Total() == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the postgres view did not catch up (lag %d): %w", lag.Total(), errors.Join(ctx.Err(), err))
		case <-tick.C:
		}
	}
}
