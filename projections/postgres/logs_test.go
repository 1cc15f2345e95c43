package postgres_test

import (
	"encoding/json"
	"testing"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/projections/postgres"
	"github.com/xbot-runtime/xbot/projections/runner"
)

// Item events as the engine writes them (services/engine/agentloop).

func rawJSON(tb testing.TB, v any) json.RawMessage {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// startTool starts an item of type typ running tool name with args.
func (l *runLog) startTool(typ events.ItemType, name, args string) string {
	item := events.NewID("itm")
	l.add(events.Draft{Type: events.ItemStarted, ItemID: item, Payload: events.ItemStartedPayload{ItemType: typ,
		Data: rawJSON(l.tb, events.ToolCallData{ToolCallID: "call_" + item[4:12], ToolName: name, Arguments: args,
			ResponseItemID: "itm_resp"})}})
	return item
}

// completeTool completes a tool item with output; exec is set for a
// command_execution.
func (l *runLog) completeTool(item string, typ events.ItemType, name, output string, exec *events.ExecData) {
	l.add(events.Draft{Type: events.ItemCompleted, ItemID: item, Payload: events.ItemCompletedPayload{
		ItemType: typ, Status: events.ItemStatusCompleted, Content: output,
		Data: rawJSON(l.tb, events.ToolResultData{ToolName: name, Output: output, Exec: exec})}})
}

func (l *runLog) failItem(item string, typ events.ItemType, code, msg string) {
	l.add(events.Draft{Type: events.ItemFailed, ItemID: item,
		Payload: events.ItemFailedPayload{ItemType: typ, ErrorCode: code, Message: msg}})
}

// awaitApproval marks a tool item as awaiting approval and pauses the run.
func (l *runLog) awaitApproval(item, tool, input string) {
	l.add(events.Draft{Type: events.ItemAwaitingApproval, ItemID: item, Payload: events.ItemAwaitingApprovalPayload{
		ItemType: events.ItemCommandExecution, ToolName: tool, Input: json.RawMessage(input)}})
	l.add(events.Draft{Type: events.RunPaused, Payload: events.RunPausedPayload{
		PauseReason: events.PauseAwaitingApproval, ItemIDs: []string{item}}})
}

// decide records a decision on item and, for allow with a wider scope than
// the item, the grant it creates; then resumes the run.
func (l *runLog) decide(item, cmd, decision, scope, tool string) {
	l.add(events.Draft{Type: events.ApprovalDecisionSubmitted, ItemID: item, CommandID: cmd,
		Payload: events.ApprovalDecisionPayload{Decision: decision, Scope: scope, Reason: "looks safe",
			Actor: events.Actor{Type: "user", ID: "u-9"}}})
	if decision == "allow" && scope != "item" {
		l.add(events.Draft{Type: events.PermissionGrantApplied, ItemID: item, CommandID: cmd,
			Payload: events.PermissionGrantPayload{GrantID: "grt_" + item, Scope: scope, ToolName: tool,
				RuleID: "rule-" + tool, RunID: l.id(), ItemID: item, Actor: events.Actor{Type: "user", ID: "u-9"}}})
	}
	l.add(events.Draft{Type: events.RunResumed})
}

// started is accepted → started.
func started(tb testing.TB, tenant, session string) *runLog {
	l := newRun(tb, tenant, session)
	l.accept(events.NewID("cmd"), "k-"+l.id())
	l.lifecycle(events.RunStarted, events.RunStartedPayload{ExecutorID: "exec-1"})
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
