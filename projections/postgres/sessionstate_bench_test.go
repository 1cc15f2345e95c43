package postgres_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/events/eventstest"
)

// BenchmarkSessionState measures GetSessionState on a session of n runs,
// each with a steer and a tool call that waited for approval (decided), the
// last one paused on a new approval, in a database that also holds
// another session as large.
func BenchmarkSessionState(b *testing.B) {
	for _, n := range []int{10, 200, 2000} {
		b.Run(fmt.Sprintf("runs=%d", n), func(b *testing.B) {
			f := newFixture(b)
			off := offsets{}
			for _, session := range []string{"s-other", "s-bench"} {
				for i := range n {
					f.apply(b, off.records(b, int32(i%4), stateBenchRun(b, session, i, i == n-1)...))
				}
			}
			ctx := context.Background()
			for b.Loop() {
				st, err := f.store.GetSessionState(ctx, "acme", "s-bench")
				if err != nil || len(st.Pending) != 1 {
					b.Fatalf("state %+v, %v", st, err)
				}
			}
		})
	}
}

// stateBenchRun is one run of the benchmark's session: accepted, a steer
// applied, a tool call approved and run, then completed, or paused on a
// second call when last.
func stateBenchRun(b testing.TB, session string, i int, last bool) []events.Envelope {
	l := startedNth(b, session, i)
	steer := events.NewID("cmd")
	l.CommandAccepted(steer, events.CommandAcceptedPayload{CommandType: "AppendUserInput", IdempotencyKey: fmt.Sprintf("%s-steer-%d", session, i)})
	l.Steer(events.NewID("itm"), steer, "also this")
	l.CommandApplied(steer, events.CommandAppliedPayload{CommandType: "AppendUserInput", IdempotencyKey: fmt.Sprintf("%s-steer-%d", session, i)})
	call := events.ToolCallRef{ID: "call_1", Name: "shell", Arguments: `{"command":"echo deploy"}`}
	tool := events.NewID("itm")
	l.ToolStarted(tool, "", events.ItemCommandExecution, call)
	l.Ask(tool, call, "deploy", "deploys need a person")
	l.Paused(events.PauseAwaitingApproval, tool)
	l.Decide(eventstest.Decision{CommandID: events.NewID("cmd"), ItemID: tool, Decision: events.DecisionAllow,
		Scope: events.ScopeItem, Actor: events.Actor{Type: "user", ID: "u-1"}})
	l.ToolCompleted(tool, events.ItemCommandExecution, call, events.ToolResultData{Output: "deployed"})
	if last {
		next := events.NewID("itm")
		l.ToolStarted(next, "", events.ItemCommandExecution, call)
		l.Ask(next, call, "deploy", "deploys need a person")
		l.Paused(events.PauseAwaitingApproval, next)
		return l.Events()
	}
	l.assistantMessage(2)
	l.Completed("done")
	return l.Events()
}

// startedNth is run i of a session of tenant acme, accepted i seconds after
// the clock (under the key "<session>-create-<i>") and started.
func startedNth(tb testing.TB, session string, i int) *runLog {
	l := newRun(tb, "acme", session)
	l.At(clock + int64(i)*1000)
	l.accept(events.NewID("cmd"), fmt.Sprintf("%s-create-%d", session, i))
	l.Started("exec-1")
	return l
}
