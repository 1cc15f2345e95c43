package systemtest_test

import (
	"bytes"
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/services/engine/model"
	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/stack"
)

// afterToolModel asks for one shell call, then answers once the request
// carries its result, handing that request to seen.
type afterToolModel struct{ seen chan model.Request }

func (m afterToolModel) Stream(_ context.Context, req model.Request, _ func(model.Delta)) (model.Response, error) {
	for _, msg := range req.Messages {
		if msg.Role == model.RoleTool {
			select {
			case m.seen <- req:
			default:
			}
			return model.Response{Text: "done", FinishReason: "stop"}, nil
		}
	}
	return model.Response{ToolCalls: []model.ToolCall{{ID: "call_1", Name: "shell", Arguments: `{"command":"echo ran"}`}},
		FinishReason: "tool_calls"}, nil
}

// TestAToolsResultDoesNotWaitForItsCommit: a tool call's start is durable
// before the tool runs, but its result only joins the partition's next
// commit. While the transaction that holds the result cannot commit, the
// engine already asks the model with it; the run's end, which waits, then
// commits after it, in order and without a gap.
func TestAToolsResultDoesNotWaitForItsCommit(t *testing.T) {
	t.Parallel()
	agent := profile.Profile{ID: "quick", Model: profile.ModelScripted, Tools: []string{"shell"},
		Script: []profile.Turn{{Text: "replaced by afterToolModel"}}}
	e := newEnv(t).withAgents(agent)
	front := e.start("front", nil, stack.API, stack.ProjectorPostgres)
	held, release := make(chan struct{}), make(chan struct{})
	var holding atomic.Bool
	var once sync.Once
	result := []byte(`"type":"` + string(events.ItemCompleted) + `"`)
	hooks := &kafka.Hooks{BeforeCommit: func(_ int32, recs []kafka.OutRecord) {
		for _, r := range recs {
			if bytes.Contains(r.Value, result) && bytes.Contains(r.Value, []byte(`"command_execution"`)) &&
				holding.CompareAndSwap(false, true) {
				close(held)
				<-release
				return
			}
		}
	}}
	m := afterToolModel{seen: make(chan model.Request, 1)}
	comp := localCompute(t, t.TempDir())
	e.startWith("exec", func(o *stack.Options) {
		o.Components, o.ExecutorHooks, o.Compute = []stack.Component{stack.Executor}, hooks, comp
		o.Models = func(profile.Profile) (model.Provider, string, error) { return m, profile.ModelScripted, nil }
	})
	// Registered after the executor's stop, so run before it: a failed test
	// leaves no commit held.
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	runID := create(t, front, "quick", "run it", "tool-result-1").RunID
	select {
	case <-held:
	case <-time.After(30 * time.Second):
		t.Fatal("no transaction held the tool's result")
	}
	select {
	case req := <-m.seen:
		if last := req.Messages[len(req.Messages)-1]; last.Role != model.RoleTool || last.ToolCallID != "call_1" {
			t.Errorf("the model's second request ends with %+v, want the call's result", last)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the model was not asked again while the tool's result waited for its commit")
	}
	once.Do(func() { close(release) })
	waitStatus(t, front, runID, "completed", 20*time.Second)
	assertLog(t, front, runID,
		"runtime.item.started:assistant_message", "runtime.item.completed:assistant_message",
		"runtime.item.started:command_execution", "delta+", "runtime.item.completed:command_execution",
		"runtime.item.started:assistant_message", "runtime.item.completed:assistant_message",
		"runtime.run.completed")
	e.invariants(front)
}
