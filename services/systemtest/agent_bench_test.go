package systemtest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/devstack/kafkatest"
	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/services/engine/model"
	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/engine/tools"
	"github.com/xbot-runtime/xbot/services/stack"
)

// noop is a tool that does nothing, for measuring the engine itself.
type noop struct{}

func (noop) Spec() model.ToolSpec {
	return model.ToolSpec{Name: "noop", Description: "does nothing",
		Parameters: json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)}
}
func (noop) ItemType() events.ItemType                    { return events.ItemToolCall }
func (noop) Run(context.Context, tools.Call) tools.Result { return tools.Result{Output: "ok"} }

func noopRegistry(b *testing.B) *tools.Registry {
	reg, err := tools.NewRegistry(noop{})
	if err != nil {
		b.Fatal(err)
	}
	return reg
}

// BenchmarkAgentTurns runs b.N runs of 5 model turns that each call a no-op
// tool, then answer, through the whole stack (API → Kafka → executor with a
// zero-latency scripted model → Kafka → Postgres): agent turns/s and events/s.
func BenchmarkAgentTurns(b *testing.B) {
	const toolTurns = 5
	turn := profile.Turn{ToolCalls: []profile.ScriptedCall{{Name: "noop", Arguments: "{}"}}}
	script := append(slices.Repeat([]profile.Turn{turn}, toolTurns), profile.Turn{Text: "done"})
	st := benchStack(b, noopRegistry(b), profile.Profile{ID: "fast", Model: profile.ModelScripted, Tools: []string{"noop"}, Script: script})
	elapsed, evs := measureRuns(b, st)
	b.ReportMetric(float64(b.N*(toolTurns+1))/elapsed.Seconds(), "turns/s")
	b.ReportMetric(float64(evs)/elapsed.Seconds(), "events/s")
}

// BenchmarkSteerLatency measures, for b.N steers sent one after another to a
// run that loops on a no-op tool, the time from producing the command to a
// read_committed consumer seeing its runtime.command.applied.
func BenchmarkSteerLatency(b *testing.B) {
	cl := kafkatest.NewCluster(b, 12)
	kcfg := cl.Config()
	turn := profile.Turn{ToolCalls: []profile.ScriptedCall{{Name: "noop", Arguments: "{}"}}}
	cat, _ := profile.NewCatalog(profile.Profile{ID: "loop", Model: profile.ModelScripted, Tools: []string{"noop"},
		Limits: profile.Limits{MaxTurns: 1 << 30, MaxToolCalls: 1 << 30, MaxWallTime: time.Hour}, Script: []profile.Turn{turn}})
	ctx := context.Background()
	st, err := stack.Start(ctx, stack.Options{Kafka: kcfg, Profiles: cat, Logger: zap.NewNop(),
		Components: []stack.Component{stack.Executor}, Tools: noopRegistry(b)})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Stop(ctx)
	prod, err := kafka.NewProducer(kcfg)
	if err != nil {
		b.Fatal(err)
	}
	defer prod.Close()
	cons, err := kafka.NewClient(kcfg.WithDefaults(), kgo.ConsumeTopics(kcfg.WithDefaults().EventsTopic()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.FetchMaxWait(10*time.Millisecond))
	if err != nil {
		b.Fatal(err)
	}
	defer cons.Close()
	applied := make(chan string, 1024)
	started := make(chan struct{}, 1)
	cctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		for cctx.Err() == nil {
			cons.PollFetches(cctx).EachRecord(func(r *kgo.Record) {
				env, err := events.Decode(r.Value)
				if err != nil {
					return
				}
				switch env.Type {
				case events.CommandApplied:
					applied <- env.CommandID
				case events.RunStarted:
					started <- struct{}{}
				}
			})
		}
	}()
	send := func(c commands.Envelope) {
		raw, _ := json.Marshal(c)
		if err := prod.ProduceWithHeaders(ctx, kcfg.WithDefaults().CommandsTopic(), c.RunID, raw, st.CommandKeys().Sign(c.RunID, raw)); err != nil {
			b.Fatal(err)
		}
	}
	sk := events.SandboxKey{TenantID: tenant, WorkspaceID: "w", AgentID: "loop", OwnerID: "u"}
	runID := commands.RunIDFor(tenant, "steer-bench", sk, 12)
	hdr := commands.Header{RunID: runID, TenantID: tenant, Actor: events.Actor{Type: "user", ID: "u"}}
	create, _ := commands.New(commands.CreateRun, withKey(hdr, "steer-bench"), commands.CreateRunPayload{AgentID: "loop",
		Input: events.UserInput{Content: "loop"}, SandboxKey: sk})
	send(create)
	select {
	case <-started:
	case <-time.After(30 * time.Second):
		b.Fatal("run did not start")
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		c, _ := commands.New(commands.AppendUserInput, withKey(hdr, fmt.Sprintf("steer-%d", i)),
			commands.AppendUserInputPayload{Intent: commands.IntentSteer, Content: "go left"})
		t0 := time.Now()
		send(c)
	wait:
		for {
			select {
			case id := <-applied:
				if id == c.CommandID {
					break wait
				}
			case <-time.After(30 * time.Second):
				b.Fatalf("steer %d not applied", i)
			}
		}
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	cancel, _ := commands.New(commands.CancelRun, withKey(hdr, "steer-bench-stop"), commands.CancelRunPayload{})
	send(cancel)
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}

func withKey(h commands.Header, key string) commands.Header {
	h.IdempotencyKey = key
	return h
}
