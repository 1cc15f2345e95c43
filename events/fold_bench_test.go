package events_test

import (
	"fmt"
	"testing"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/events/eventstest"
)

// BenchmarkFoldLongRun folds runs of 10, 100 and 1,000 tool turns, each a
// streamed response of eight deltas that calls a shell command, and
// reports the time per event: the fold of one event should not grow with
// the run's length.
//
//	go test -run '^$' -bench FoldLongRun -benchmem ./events/
func BenchmarkFoldLongRun(b *testing.B) {
	for _, turns := range []int{10, 100, 1000} {
		l := eventstest.New(b, events.Identity{RunID: "run_long", TenantID: "acme"}).
			Accepted("cmd_long", events.RunAcceptedPayload{AgentID: "coder", IdempotencyKey: "k",
				Actor: events.Actor{Type: "user", ID: "u"}}).
			Started("")
		parts := []string{"Let ", "me ", "run ", "the ", "next ", "step ", "of ", "it."}
		for turn := range turns {
			resp, exec := fmt.Sprintf("itm_m%d", turn), fmt.Sprintf("itm_x%d", turn)
			call := events.ToolCallRef{ID: fmt.Sprintf("call_%d", turn), Name: "shell", Arguments: `{"command":"make"}`}
			l.Response(resp, events.AssistantData{Turn: turn, ToolCalls: []events.ToolCallRef{call}, FinishReason: "tool_calls"},
				parts...)
			l.ToolStarted(exec, resp, events.ItemCommandExecution, call)
			l.ToolCompleted(exec, events.ItemCommandExecution, call, events.ToolResultData{Output: "ok\n"})
		}
		evs := l.Events()
		b.Run(fmt.Sprintf("turns=%d", turns), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := events.FoldAll(events.RunState{}, evs); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(evs)), "ns/event")
		})
	}
}
