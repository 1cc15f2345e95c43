package runnertest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/events/eventstest"
	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/projections/runner"
)

// EventsPerRun is the length of a Run log.
const EventsPerRun = 33

// Run is the log of one run of three tool turns: accepted, started, three
// responses that each stream four deltas and request a shell call, the
// call's start and end, a final answer of four deltas, completed
// (EventsPerRun events).
func Run(tb testing.TB, n int) []events.Envelope {
	tb.Helper()
	runID := fmt.Sprintf("run_01JB%022d", n)
	l := eventstest.New(tb, events.Identity{RunID: runID, TenantID: fmt.Sprintf("tenant-%d", n%7),
		PlatformSessionID: fmt.Sprintf("sess-%d", n%97)})
	l.Accepted(fmt.Sprintf("cmd_01JB%022d", n), events.RunAcceptedPayload{AgentID: "coder",
		Input: events.UserInput{Content: "build the project and fix what fails"}, IdempotencyKey: "key-" + runID,
		Actor: events.Actor{Type: "user", ID: "alice"}})
	l.Started("executor-1")
	parts := []string{"Let me ", "look at ", "the build ", "first."}
	usage := &events.Usage{PromptTokens: 1200, CompletionTokens: 80, TotalTokens: 1280}
	for turn := range 3 {
		resp, exec := fmt.Sprintf("itm_%d_m%d", n, turn), fmt.Sprintf("itm_%d_x%d", n, turn)
		call := events.ToolCallRef{ID: fmt.Sprintf("call_%d", turn), Name: "shell",
			Arguments: fmt.Sprintf(`{"command":"make step-%d"}`, turn)}
		l.Response(resp, events.AssistantData{Turn: turn, ToolCalls: []events.ToolCallRef{call},
			FinishReason: "tool_calls", Model: "demo", Usage: usage}, parts...)
		l.ToolStarted(exec, resp, events.ItemCommandExecution, call)
		l.ToolCompleted(exec, events.ItemCommandExecution, call, events.ToolResultData{
			Output: fmt.Sprintf("make: step-%d done\nok\n", turn)})
	}
	l.Response(fmt.Sprintf("itm_%d_final", n), events.AssistantData{Turn: 3, FinishReason: "stop", Model: "demo",
		Usage: usage}, parts...)
	l.Completed("the build passes")
	return l.Events()
}

// Produce writes Run logs, at least want events in all, to the
// events topic of kc, each keyed by its run id so that it lands on its run's
// partition, runs interleaved 20 at a time as concurrent runs interleave. It
// returns the records as the topic holds them, partition and offset filled
// in, in the order written.
func Produce(tb testing.TB, kc kafka.Config, want int) []runner.Record {
	tb.Helper()
	cl, err := kafka.NewClient(kc, kgo.ProducerLinger(0), kgo.MaxBufferedRecords(1<<20))
	if err != nil {
		tb.Fatal(err)
	}
	defer cl.Close()
	var out []runner.Record
	for run := 0; len(out) < want; {
		group := make([][]events.Envelope, 0, 20)
		for range 20 {
			group = append(group, Run(tb, run))
			run++
		}
		out = append(out, produce(tb, cl, kc.EventsTopic(), eventstest.Interleave(group...))...)
	}
	return out
}

func produce(tb testing.TB, cl *kgo.Client, topic string, evs []events.Envelope) []runner.Record {
	tb.Helper()
	krs := make([]*kgo.Record, len(evs))
	for i, e := range evs {
		raw, err := json.Marshal(e)
		if err != nil {
			tb.Fatal(err)
		}
		krs[i] = &kgo.Record{Topic: topic, Key: []byte(e.RunID), Value: raw}
	}
	if err := cl.ProduceSync(context.Background(), krs...).FirstErr(); err != nil {
		tb.Fatal(err)
	}
	out := make([]runner.Record, len(krs))
	for i, kr := range krs {
		out[i] = runner.Record{Record: kafka.Record{Partition: kr.Partition, Offset: kr.Offset, Key: string(kr.Key),
			Value: kr.Value}, Event: evs[i]}
	}
	return out
}
