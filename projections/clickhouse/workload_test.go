package clickhouse_test

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/projections/runner"
)

// runLog writes a run's log the way the executor does: every event is
// sealed and folded, so a workload that breaks the state machine fails here,
// not in the projector.
type runLog struct {
	tb  testing.TB
	id  events.Identity
	st  events.RunState
	evs []events.Envelope
	now int64 // occurredAt of the next event, Unix ms
	// anonymous says the log was written by an executor from before the
	// runtime.command.* outcomes named who sent the command.
	anonymous bool
}

// day1 is 2026-03-02 09:00:00 UTC; workload runs start on day1 + n days.
var day1 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC).UnixMilli()

const dayMs = 24 * 60 * 60 * 1000

func newRun(tb testing.TB, tenant, runID string, startMs int64) *runLog {
	return &runLog{tb: tb, id: events.Identity{RunID: runID, TenantID: tenant, PlatformSessionID: "sess_" + runID[4:]}, now: startMs}
}

// add seals and folds drafts, 1.25 s apart (emitted 5 ms after).
func (l *runLog) add(ds ...events.Draft) *runLog {
	l.tb.Helper()
	for _, d := range ds {
		seq := l.st.LastSeq + 1
		env, err := d.Seal(l.id, seq, events.DerivedID("evt", l.id.RunID, fmt.Sprint(seq)), l.now)
		if err != nil {
			l.tb.Fatal(err)
		}
		env.EmittedAt = l.now + 5
		if l.st, err = events.Fold(l.st, env); err != nil {
			l.tb.Fatalf("%s seq %d %s: %v", l.id.RunID, seq, d.Type, err)
		}
		l.evs = append(l.evs, env)
		l.now += 1250
	}
	return l
}

// anonymousOutcomes marks the log as written before outcomes named their sender.
func (l *runLog) anonymousOutcomes() *runLog {
	l.anonymous = true
	return l
}

// sender is the actor an outcome of a's command names: none in an anonymous log.
func (l *runLog) sender(a events.Actor) *events.Actor {
	if l.anonymous {
		return nil
	}
	return &a
}

func rawJSON(tb testing.TB, v any) json.RawMessage {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// create is the accepted CreateRun issued by actor, then the run starts
// with its capability snapshot, inheriting the session's grants.
func (l *runLog) create(cmd, key string, actor events.Actor, grants ...events.PermissionGrant) *runLog {
	l.add(events.Draft{Type: events.RunAccepted, CommandID: cmd, Payload: events.RunAcceptedPayload{
		AgentID: "coder", Input: events.UserInput{Content: "tidy the repo"}, IdempotencyKey: key, Actor: actor,
		SandboxKey:    events.SandboxKey{TenantID: l.id.TenantID, WorkspaceID: "ws-1", AgentID: "coder", OwnerID: actor.ID},
		SessionGrants: grants}})
	return l.snapshot(grants).add(events.Draft{Type: events.RunStarted, Payload: events.RunStartedPayload{ExecutorID: "exec-1"}})
}

// response is a completed model call by model using tokens, requesting calls.
func (l *runLog) response(item string, turn, tokens int, calls ...events.ToolCallRef) *runLog {
	return l.add(
		events.Draft{Type: events.ItemStarted, ItemID: item, Payload: events.ItemStartedPayload{ItemType: events.ItemAssistantMessage}},
		events.Draft{Type: events.ItemDelta, ItemID: item, Payload: events.ItemDeltaPayload{Delta: "Working."}},
		events.Draft{Type: events.ItemCompleted, ItemID: item, Payload: events.ItemCompletedPayload{
			ItemType: events.ItemAssistantMessage, Status: events.ItemStatusCompleted, Content: "Working.",
			Data: rawJSON(l.tb, events.AssistantData{Turn: turn, ToolCalls: calls, Model: "gpt-test",
				Usage: &events.Usage{PromptTokens: tokens - 10, CompletionTokens: 10, TotalTokens: tokens}})}})
}

// startExec starts a command_execution item for call.
func (l *runLog) startExec(item, resp string, call events.ToolCallRef) *runLog {
	return l.add(events.Draft{Type: events.ItemStarted, ItemID: item, Payload: events.ItemStartedPayload{
		ItemType: events.ItemCommandExecution, Data: rawJSON(l.tb, events.ToolCallData{
			ToolCallID: call.ID, ToolName: call.Name, Arguments: call.Arguments, ResponseItemID: resp})}})
}

// finishExec completes a command_execution item with exit code.
func (l *runLog) finishExec(item string, call events.ToolCallRef, command string, exit int) *runLog {
	out := fmt.Sprintf("exit code %d", exit)
	return l.add(events.Draft{Type: events.ItemCompleted, ItemID: item, Payload: events.ItemCompletedPayload{
		ItemType: events.ItemCommandExecution, Status: events.ItemStatusCompleted, Content: out,
		Data: rawJSON(l.tb, events.ToolResultData{ToolCallID: call.ID, ToolName: call.Name, Output: out,
			Exec: &events.ExecData{Command: command, Cwd: "/work", ExitCode: exit, DurationMs: 120}})}})
}

func (l *runLog) accepted(cmd, key, typ string, payload any, by events.Actor) *runLog {
	return l.add(events.Draft{Type: events.CommandAccepted, CommandID: cmd, Payload: events.CommandAcceptedPayload{
		CommandType: typ, IdempotencyKey: key, Command: rawJSON(l.tb, payload), Actor: l.sender(by)}})
}

// applied records that by's command took effect; a command accepted earlier
// names the actor of its runtime.command.accepted, as the executor does.
func (l *runLog) applied(cmd, key, typ string, by events.Actor) *runLog {
	return l.add(events.Draft{Type: events.CommandApplied, CommandID: cmd, Payload: events.CommandAppliedPayload{
		CommandType: typ, IdempotencyKey: key, Actor: l.sender(by)}})
}

func (l *runLog) rejected(cmd, key, typ, code, msg string, by events.Actor) *runLog {
	return l.add(events.Draft{Type: events.CommandRejected, CommandID: cmd, Payload: events.CommandRejectedPayload{
		CommandType: typ, IdempotencyKey: key, Code: events.Code(code), Message: msg, Actor: l.sender(by)}})
}

func (l *runLog) noEffect(cmd, key, typ, reason string, by events.Actor) *runLog {
	return l.add(events.Draft{Type: events.CommandNoEffect, CommandID: cmd, Payload: events.CommandNoEffectPayload{
		CommandType: typ, IdempotencyKey: key, Reason: reason, Actor: l.sender(by)}})
}

// steer is by's AppendUserInput/steer taking effect at a safe point.
func (l *runLog) steer(cmd, key, item, text string, by events.Actor) *runLog {
	l.accepted(cmd, key, "AppendUserInput", map[string]string{"intent": "steer", "content": text}, by)
	return l.add(events.Draft{Type: events.ItemStarted, ItemID: item, CommandID: cmd, Payload: events.ItemStartedPayload{
		ItemType: events.ItemUserMessage, Content: text, Data: rawJSON(l.tb, events.UserMessageData{Intent: "steer", CommandID: cmd})}},
		events.Draft{Type: events.ItemCompleted, ItemID: item, CommandID: cmd, Payload: events.ItemCompletedPayload{
			ItemType: events.ItemUserMessage, Status: events.ItemStatusCompleted, Content: text}}).
		applied(cmd, key, "AppendUserInput", by)
}

// records lays the logs out on partitions (by run, like the events topic)
// and interleaves the runs of a partition round-robin, keeping each run's
// order, as the executor's group commits do.
func records(tb testing.TB, partitions int, logs ...*runLog) []runner.Record {
	tb.Helper()
	byPart := make([][]*runLog, partitions)
	for _, l := range logs {
		h := fnv.New32a()
		_, _ = h.Write([]byte(l.id.RunID))
		p := int(h.Sum32() % uint32(partitions))
		byPart[p] = append(byPart[p], l)
	}
	var out []runner.Record
	for p, runs := range byPart {
		next := make([]int, len(runs))
		offset := int64(0)
		for more := true; more; {
			more = false
			for i, l := range runs {
				if next[i] >= len(l.evs) {
					continue
				}
				more = true
				env := l.evs[next[i]]
				next[i]++
				value, err := json.Marshal(env)
				if err != nil {
					tb.Fatal(err)
				}
				out = append(out, runner.Record{Event: env, Record: kafka.Record{
					Partition: int32(p), Offset: offset, Key: env.RunID, Value: value}})
				offset += 2 // every transaction's commit marker takes an offset
			}
		}
	}
	return out
}
