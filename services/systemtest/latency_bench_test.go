package systemtest_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"slices"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/services/api/client"
	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/stack"
)

// BenchmarkIdleRunLatency measures one run at a time on an idle system with
// a scripted model that answers at once: how long a create takes to be
// answered with its outcome (the default ?wait=), and how long a client
// that creates with ?wait=0 and then opens the run's stream waits for the
// first chunk (the reply's start). It reports the medians and p90s over b.N
// runs of each; a stream answered 404 is opened again at once, as a client
// would, and counted in the time.
func BenchmarkIdleRunLatency(b *testing.B) {
	asTheBinaryRuns(b)
	fast := profile.Profile{ID: "fast", Model: profile.ModelScripted,
		Script: []profile.Turn{{Text: "a quick scripted answer!", ChunkChars: 8}}}
	st := benchStack(b, nil, fast)
	select {
	case <-st.StreamsReady():
	case <-time.After(10 * time.Second):
		b.Fatal("the stream tail never became ready")
	}
	c := apiClient(b, st, token, nil)
	req := client.CreateRunRequest{AgentID: "fast", Input: client.UserInput{Content: "hi"}}
	answered, first := make([]time.Duration, 0, b.N), make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		res, err := c.CreateRun(b.Context(), req, client.CommandOptions{IdempotencyKey: fmt.Sprintf("idle-a-%d", i)})
		if err != nil || res.Outcome != client.OutcomeAccepted {
			b.Fatalf("create: %+v %v", res, err)
		}
		answered = append(answered, time.Since(start))
		streamToEnd(b, c, res.RunID, time.Time{})

		start = time.Now()
		res, err = c.CreateRun(b.Context(), req, client.CommandOptions{IdempotencyKey: fmt.Sprintf("idle-b-%d", i), Wait: client.WaitFor(0)})
		if err != nil {
			b.Fatalf("create: %v", err)
		}
		first = append(first, streamToEnd(b, c, res.RunID, start))
	}
	b.StopTimer()
	report(b, "answered", answered)
	report(b, "first-chunk", first)
}

// streamToEnd reads run runID's stream to its end and returns how long after
// start the reply's start chunk came; a 404 opens it again.
func streamToEnd(b *testing.B, c *client.Client, runID string, start time.Time) time.Duration {
	ctx, cancel := context.WithTimeout(b.Context(), 30*time.Second)
	defer cancel()
	for {
		var first time.Duration
		var err error
		for chunk, cerr := range c.RunChunks(ctx, runID, client.StreamOptions{}) {
			// The reply's start, not the status part the run's acceptance sends.
			if err = cerr; err == nil && first == 0 && chunk.Type == client.ChunkStart {
				first = time.Since(start)
			}
		}
		switch {
		case errors.Is(err, client.ErrRunNotFound):
			continue
		case err != nil:
			b.Fatalf("stream of %s: %v", runID, err)
		}
		return first
	}
}

// asTheBinaryRuns gives the benchmark the garbage collector's target the
// xbot binary runs with (stack.TuneGC: GOGC, else stack.DefaultGCPercent),
// and logs it.
func asTheBinaryRuns(b *testing.B) {
	prev := debug.SetGCPercent(100)
	debug.SetGCPercent(prev)
	b.Cleanup(func() { debug.SetGCPercent(prev) })
	b.Logf("GC target %d (GOGC=%q)", stack.TuneGC(), os.Getenv("GOGC"))
}

func report(b *testing.B, what string, ds []time.Duration) {
	slices.Sort(ds)
	ms := func(q float64) float64 { return float64(ds[int(q*float64(len(ds)-1))].Microseconds()) / 1000 }
	b.ReportMetric(ms(0.5), what+"-p50-ms")
	b.ReportMetric(ms(0.9), what+"-p90-ms")
}
