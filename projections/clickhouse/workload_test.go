package clickhouse_test

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/events/eventstest"
	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/projections/runner"
)

// runLog is a run's log as the executor writes it (eventstest), with the
// shapes the audit workload uses.
type runLog struct {
	*eventstest.Log
	// anonymous says the log was written by an executor from before the
	// runtime.command.* outcomes named who sent the command.
	anonymous bool
}

// day1 is 2026-03-02 09:00:00 UTC; workload runs start on day1 + n days.
var day1 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC).UnixMilli()

const dayMs = 24 * 60 * 60 * 1000

// newRun starts runID's log at startMs in a session of its own.
func newRun(tb testing.TB, tenant, runID string, startMs int64) *runLog {
	return newRunIn(tb, tenant, runID, "sess_"+runID[4:], startMs)
}

// newRunIn starts runID's log at startMs in platform session sess (a
// follow-up's). Events are 1.25 s apart, emitted 5 ms after.
func newRunIn(tb testing.TB, tenant, runID, sess string, startMs int64) *runLog {
	return &runLog{Log: eventstest.New(tb, events.Identity{RunID: runID, TenantID: tenant, PlatformSessionID: sess},
		eventstest.Clock(startMs, 1250), eventstest.EmittedAfter(5))}
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

// create is the accepted CreateRun issued by actor, then the run starts
// with its capability snapshot, inheriting the session's grants.
func (l *runLog) create(cmd, key string, actor events.Actor, grants ...events.PermissionGrant) *runLog {
	l.Accepted(cmd, events.RunAcceptedPayload{
		AgentID: "coder", Input: events.UserInput{Content: "tidy the repo"}, IdempotencyKey: key, Actor: actor,
		SandboxKey:    events.SandboxKey{TenantID: l.Identity().TenantID, WorkspaceID: "ws-1", AgentID: "coder", OwnerID: actor.ID},
		SessionGrants: grants})
	l.snapshot(grants).Started("exec-1")
	return l
}

// response is a completed model call by model using tokens, requesting calls.
func (l *runLog) response(item string, turn, tokens int, calls ...events.ToolCallRef) *runLog {
	l.Response(item, events.AssistantData{Turn: turn, ToolCalls: calls, Model: "gpt-test",
		Usage: &events.Usage{PromptTokens: tokens - 10, CompletionTokens: 10, TotalTokens: tokens}}, "Working.")
	return l
}

// startExec starts a command_execution item for call.
func (l *runLog) startExec(item, resp string, call events.ToolCallRef) *runLog {
	l.ToolStarted(item, resp, events.ItemCommandExecution, call)
	return l
}

// finishExec completes a command_execution item with exit code.
func (l *runLog) finishExec(item string, call events.ToolCallRef, command string, exit int) *runLog {
	l.ToolCompleted(item, events.ItemCommandExecution, call, events.ToolResultData{Output: fmt.Sprintf("exit code %d", exit),
		Exec: &events.ExecData{Command: command, Cwd: "/work", ExitCode: exit, DurationMs: 120}})
	return l
}

func (l *runLog) accepted(cmd, key, typ string, payload any, by events.Actor) *runLog {
	l.CommandAccepted(cmd, events.CommandAcceptedPayload{
		CommandType: typ, IdempotencyKey: key, Command: eventstest.Raw(payload), Actor: l.sender(by)})
	return l
}

// applied records that by's command took effect; a command accepted earlier
// names the actor of its runtime.command.accepted, as the executor does.
func (l *runLog) applied(cmd, key, typ string, by events.Actor) *runLog {
	l.CommandApplied(cmd, events.CommandAppliedPayload{CommandType: typ, IdempotencyKey: key, Actor: l.sender(by)})
	return l
}

func (l *runLog) rejected(cmd, key, typ, code, msg string, by events.Actor) *runLog {
	l.CommandRejected(cmd, events.CommandRejectedPayload{
		CommandType: typ, IdempotencyKey: key, Code: events.Code(code), Message: msg, Actor: l.sender(by)})
	return l
}

func (l *runLog) noEffect(cmd, key, typ, reason string, by events.Actor) *runLog {
	l.CommandNoEffect(cmd, events.CommandNoEffectPayload{CommandType: typ, IdempotencyKey: key, Reason: reason, Actor: l.sender(by)})
	return l
}

// steer is by's AppendUserInput/steer taking effect at a safe point.
func (l *runLog) steer(cmd, key, item, text string, by events.Actor) *runLog {
	l.accepted(cmd, key, "AppendUserInput", map[string]string{"intent": "steer", "content": text}, by)
	l.Steer(item, cmd, text)
	return l.applied(cmd, key, "AppendUserInput", by)
}

// records lays the logs out on partitions (by run, like the events topic)
// and interleaves the runs of a partition round-robin, keeping each run's
// order, as the executor's group commits do.
func records(tb testing.TB, partitions int, logs ...*runLog) []runner.Record {
	tb.Helper()
	byPart := make([][][]events.Envelope, partitions)
	for _, l := range logs {
		h := fnv.New32a()
		_, _ = h.Write([]byte(l.RunID()))
		p := int(h.Sum32() % uint32(partitions))
		byPart[p] = append(byPart[p], l.Events())
	}
	var out []runner.Record
	for p, runs := range byPart {
		offset := int64(0)
		for _, env := range eventstest.Interleave(runs...) {
			value, err := json.Marshal(env)
			if err != nil {
				tb.Fatal(err)
			}
			out = append(out, runner.Record{Event: env, Record: kafka.Record{
				Partition: int32(p), Offset: offset, Key: env.RunID, Value: value}})
			offset += 2 // every transaction's commit marker takes an offset
		}
	}
	return out
}
