package postgres_test

import (
	"testing"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/events/eventstest"
	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/projections/postgres"
	"github.com/xbot-runtime/xbot/projections/runner"
)

// Item events as the engine writes them (services/engine/agentloop).

// startTool starts an item of type typ running tool name with args.
func (l *runLog) startTool(typ events.ItemType, name, args string) string {
	item := events.NewID("itm")
	l.ToolStarted(item, "itm_resp", typ, events.ToolCallRef{ID: "call_" + item[4:12], Name: name, Arguments: args})
	return item
}

// completeTool completes a tool item with output; exec is set for a
// command_execution.
func (l *runLog) completeTool(item string, typ events.ItemType, name, output string, exec *events.ExecData) {
	l.ItemCompleted(item, typ, events.ItemStatusCompleted, output, events.ToolResultData{ToolName: name, Output: output, Exec: exec})
}

// awaitApproval has rule-<tool> ask for approval of started item, showing
// input, and pauses the run.
func (l *runLog) awaitApproval(item, tool, input string) {
	l.Ask(item, events.ToolCallRef{Name: tool, Arguments: input}, "rule-"+tool, "").Paused(events.PauseAwaitingApproval, item)
}

// decide applies u-9's decision on item by command cmd, as admission does
// (eventstest.Log.Decide).
func (l *runLog) decide(item, cmd, decision, scope string) {
	l.Decide(eventstest.Decision{CommandID: cmd, ItemID: item, Decision: decision, Scope: scope, Reason: "looks safe",
		Actor: events.Actor{Type: "user", ID: "u-9"}})
}

// started is accepted → started.
func started(tb testing.TB, tenant, session string) *runLog {
	l := newRun(tb, tenant, session)
	l.accept(events.NewID("cmd"), "k-"+l.RunID())
	l.Started("exec-1")
	return l
}

// runnerRecords turns records into what the runner hands a projector.
func runnerRecords(tb testing.TB, recs []postgres.Record) []runner.Record {
	tb.Helper()
	out := make([]runner.Record, len(recs))
	for i, r := range recs {
		out[i] = runner.Record{Record: kafka.Record{Partition: r.Partition, Offset: r.Offset, Value: r.Value}}
		if env, err := events.Decode(r.Value); err == nil {
			out[i].Event = env
			out[i].Key = env.RunID
		}
	}
	return out
}

// oneByOne applies every record in a batch of its own.
func (f *fixture) oneByOne(tb testing.TB, recs []postgres.Record) {
	tb.Helper()
	for _, r := range recs {
		f.apply(tb, []postgres.Record{r})
	}
}
