package systemtest_test

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/infra/devstack/kafkatest"
	"github.com/xbot-runtime/xbot/infra/devstack/pgtest"
	"github.com/xbot-runtime/xbot/services/api"
	"github.com/xbot-runtime/xbot/services/api/client"
	"github.com/xbot-runtime/xbot/services/engine/model"
	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/stack"
)

// clockModel streams n deltas, gap apart, each the time it was emitted
// ("<unix ns>"), so a client can tell how long each took to reach it.
type clockModel struct {
	n   int
	gap time.Duration
}

func (m clockModel) Stream(ctx context.Context, _ model.Request, onDelta func(model.Delta)) (model.Response, error) {
	var text strings.Builder
	for range m.n {
		select {
		case <-ctx.Done():
			return model.Response{Text: text.String()}, ctx.Err()
		case <-time.After(m.gap):
		}
		d := "<" + strconv.FormatInt(time.Now().UnixNano(), 10) + ">"
		text.WriteString(d)
		onDelta(model.Delta{Text: d})
	}
	return model.Response{Text: text.String(), FinishReason: "stop"}, nil
}

var clockStamp = regexp.MustCompile(`<(\d+)>`)

// BenchmarkDeltaToClient measures how long a model's delta takes to reach a
// browser's stream (the SSE text-delta that carries it) while b.N runs
// stream at once (`-benchtime 1000x` for the figure): each run's
// model emits 40 deltas 150 ms apart, each client creates its run with
// ?wait=0 and reads its stream to the end. The latency of a delta counts
// from its emission in the model to the client reading the line that holds
// it, coalescing included. It reports p50, p99 and max over every delta.
func BenchmarkDeltaToClient(b *testing.B) {
	asTheBinaryRuns(b)
	const deltas, gap = 40, 150 * time.Millisecond
	agent := profile.Profile{ID: "clock", Model: profile.ModelScripted, Script: []profile.Turn{{Text: "replaced by clockModel"}}}
	cat, err := profile.NewCatalog(agent)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	st, err := stack.Start(ctx, stack.Options{Kafka: kafkatest.NewCluster(b, 12).Config(), PGDSN: pgtest.NewDatabase(b),
		APIAddr: "127.0.0.1:0", Tokens: map[string]string{token: actingTenant}, Profiles: cat, Logger: zap.NewNop(),
		WaitDefault: time.Second, WaitMax: time.Second,
		APILimits: api.Limits{MaxStreams: 4 * b.N, MaxStreamsPerPrincipal: 4 * b.N, MaxConns: 8 * b.N},
		Models: func(profile.Profile) (model.Provider, string, error) {
			return clockModel{n: deltas, gap: gap}, profile.ModelScripted, nil
		}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Stop(ctx) })
	eventually.Holds(b, 30*time.Second, "stack healthy", func() bool {
		return st.Healthy(ctx) == nil && len(st.Executor.Partitions()) > 0
	})
	<-st.StreamsReady()
	c := apiClient(b, st, token, nil)

	var mu sync.Mutex
	lat := make([]time.Duration, 0, b.N*deltas)
	var wg sync.WaitGroup
	errs := make(chan error, b.N)
	b.ResetTimer()
	for i := range b.N {
		wg.Go(func() {
			got, err := streamDeltas(b.Context(), c, i)
			if err != nil {
				errs <- err
				return
			}
			mu.Lock()
			lat = append(lat, got...)
			mu.Unlock()
		})
	}
	wg.Wait()
	b.StopTimer()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	if len(lat) != b.N*deltas {
		b.Fatalf("%d deltas reached the clients, want %d", len(lat), b.N*deltas)
	}
	report(b, "delta", lat)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(lat[int(0.99*float64(len(lat)-1))]), "delta-p99-ms")
	b.ReportMetric(ms(lat[len(lat)-1]), "delta-max-ms")
}

// streamDeltas creates run i and reads its stream to the end, returning the
// latency of every delta it carried.
func streamDeltas(ctx context.Context, c *client.Client, i int) ([]time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	res, err := c.CreateRun(ctx, client.CreateRunRequest{AgentID: "clock", Input: client.UserInput{Content: "tick"},
		SandboxKey: &client.SandboxKeyRequest{OwnerID: fmt.Sprintf("o-%d", i)}},
		client.CommandOptions{IdempotencyKey: fmt.Sprintf("delta-%d", i), Wait: client.WaitFor(0)})
	if err != nil {
		return nil, fmt.Errorf("create %d: %w", i, err)
	}
	var out []time.Duration
	for chunk, err := range c.RunChunks(ctx, res.RunID, client.StreamOptions{}) {
		now := time.Now()
		if err != nil {
			return nil, fmt.Errorf("stream of %s: %w", res.RunID, err)
		}
		if chunk.Type != "text-delta" {
			continue
		}
		for _, m := range clockStamp.FindAllStringSubmatch(chunk.Delta, -1) {
			ns, _ := strconv.ParseInt(m[1], 10, 64)
			out = append(out, now.Sub(time.Unix(0, ns)))
		}
	}
	return out, nil
}
