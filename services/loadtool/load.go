package loadtool

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/api/client"
)

// runTiming is one run's latencies, each from the moment its create was sent.
type runTiming struct {
	runID                        string
	accepted, firstChunk, closed time.Duration
	err                          error
}

// load is the state of one load: the results and the lag samples.
type load struct {
	t       *tool
	c       *client.Client
	timings []runTiming
	done    atomic.Int64
	failed  atomic.Int64
	began   time.Time
	lag     lagSampler
	// viewsErr: the read model did not show every run completed (awaitViews).
	viewsErr error
}

// newClient is a client of the API at addr that keeps a connection per
// request a load's conns clients may have open at once.
func newClient(addr, token string, conns int) (*client.Client, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	// Each client holds a stream and makes a request at the same time.
	tr.MaxIdleConnsPerHost, tr.MaxConnsPerHost = 2*conns+4, 0
	c, err := client.New(client.Config{BaseURL: "http://" + addr, Token: token, HTTP: &http.Client{Transport: tr}})
	if err != nil {
		return nil, fmt.Errorf("bench client: %w", err)
	}
	return c, nil
}

// drive runs Runs runs with Concurrency clients; each client creates a run,
// opens its stream right away and follows it to [DONE], then the next.
func (l *load) drive(ctx context.Context) time.Duration {
	n, conc := l.t.opts.Runs, min(l.t.opts.Concurrency, l.t.opts.Runs)
	l.timings = make([]runTiming, n)
	next := make(chan int)
	var wg sync.WaitGroup
	l.began = time.Now()
	for worker := range conc {
		wg.Go(func() {
			for i := range next {
				l.timings[i] = l.one(ctx, i, fmt.Sprintf("bench-%d", worker))
				if l.timings[i].err != nil {
					l.failed.Add(1)
				}
				l.done.Add(1)
			}
		})
	}
	stop := l.watch(ctx)
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	l.viewsErr = l.awaitViews(ctx)
	elapsed := time.Since(l.began)
	stop()
	return elapsed
}

// one creates run i in workspace and follows its stream to [DONE]. The
// stream's last finish chunk says how the run ended (messageMetadata.outcome),
// as an AI SDK client reads it; a stream that ended without one falls back
// to reading the run until it reads completed. That the read model shows
// every run completed is awaited once for all of them (awaitViews).
func (l *load) one(ctx context.Context, i int, workspace string) runTiming {
	t0 := time.Now()
	id, err := l.create(ctx, fmt.Sprintf("bench-%s-%d", l.t.nonce, i), workspace)
	rt := runTiming{runID: id, accepted: time.Since(t0), err: err}
	if err != nil {
		return rt
	}
	var outcome string
	chunk := func(ev client.StreamEvent) error {
		if rt.firstChunk == 0 {
			rt.firstChunk = time.Since(t0)
		}
		if o := finishOutcome(ev.Data); o != "" {
			outcome = o
		}
		return nil
	}
	if rt.err = l.c.FollowRun(ctx, id, "", chunk); rt.err != nil {
		return rt
	}
	rt.closed = time.Since(t0)
	if rt.firstChunk == 0 { // the stream held [DONE] alone
		rt.firstChunk = rt.closed
	}
	switch outcome {
	case string(events.StatusCompleted):
		return rt
	case "":
		wctx, cancel := context.WithTimeout(ctx, acceptWait)
		defer cancel()
		_, rt.err = l.c.AwaitRun(wctx, id, func(r client.Run) bool { return r.Status == string(events.StatusCompleted) })
	default:
		rt.err = fmt.Errorf("run %s: its stream ended %s", id, outcome)
	}
	return rt
}

// finishOutcome is the messageMetadata.outcome of a finish chunk's data,
// "" for any other chunk.
func finishOutcome(data string) string {
	if !strings.Contains(data, `"finish"`) {
		return ""
	}
	var c client.Chunk
	if json.Unmarshal([]byte(data), &c) != nil || c.Type != client.ChunkFinish || c.MessageMetadata == nil {
		return ""
	}
	return c.MessageMetadata.Outcome
}

// awaitViews waits until the read model shows every run that completed on
// its stream as completed, up to acceptWait: the load ends once the views
// hold what its clients saw.
func (l *load) awaitViews(ctx context.Context) error {
	ids := completedIDs(l.timings)
	ctx, cancel := context.WithTimeout(ctx, acceptWait)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		var n int
		err := l.t.sys.Stack.Pool.QueryRow(ctx, `SELECT count(*) FROM runs WHERE run_id = ANY($1) AND status = $2`,
			ids, string(events.StatusCompleted)).Scan(&n)
		if err == nil && n == len(ids) {
			return nil
		}
		select {
		case <-ctx.Done():
			if err == nil {
				err = fmt.Errorf("%d of %d runs read completed", n, len(ids))
			}
			return fmt.Errorf("the read model after the load: %w", err)
		case <-tick.C:
		}
	}
}

// create posts a run and waits for its outcome; it returns the run id.
func (l *load) create(ctx context.Context, key, workspace string) (string, error) {
	res, err := l.c.CreateRun(ctx, client.CreateRunRequest{AgentID: agentID, Input: client.UserInput{Content: "bench"},
		SandboxKey: &client.SandboxKeyRequest{WorkspaceID: workspace}},
		client.CommandOptions{IdempotencyKey: key, Wait: client.WaitFor(acceptWait)})
	if err != nil {
		return "", fmt.Errorf("create: %w", err)
	}
	if res.Outcome != client.OutcomeAccepted {
		return "", fmt.Errorf("create: outcome %q %s", res.Outcome, res.Detail)
	}
	return res.RunID, nil
}

// watch samples projector lag and prints progress until stopped.
func (l *load) watch(ctx context.Context) func() {
	ctx, cancel := context.WithCancel(ctx)
	pp := newProgress(os.Stderr, l.t.opts.Runs)
	var wg sync.WaitGroup
	wg.Go(func() {
		// 200 ms: several samples per second of a run without loading the API.
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			pp.report(l.done.Load(), l.failed.Load(), time.Since(l.began), false)
			l.lag.sample()
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	})
	return func() {
		cancel()
		wg.Wait()
		pp.report(l.done.Load(), l.failed.Load(), time.Since(l.began), true)
	}
}
