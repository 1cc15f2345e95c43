package agentloop

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/executor"
	"github.com/xbot-runtime/xbot/services/tools"
)

func nowMs() int64 { return time.Now().UnixMilli() }

// toolStage runs before_tool_execution, the calls of the last response that
// have not started (several at once, up to the profile's concurrency), and
// after_tool_result. A call to ask_user leaves its clarification_request
// open and pauses the run once the other calls are done.
func (r *runner) toolStage(ctx context.Context, pr progress) error {
	if stop, err := r.run.SafePoint(ctx, executor.BeforeToolExecution,
		executor.SafePointOptions{Unstarted: r.cancelledCalls(pr)}); err != nil || stop {
		return stopOr(err)
	}
	left := r.limits.MaxToolCalls - pr.toolCalls
	if left <= 0 {
		return r.budget(ctx, fmt.Sprintf("the run reached its limit of %d tool calls", r.limits.MaxToolCalls))
	}
	calls := pr.unstarted[:min(left, len(pr.unstarted))]

	step, cancel := r.run.Step(r.wall)
	defer cancel()
	var (
		wg        sync.WaitGroup
		mu        sync.Mutex
		firstErr  error
		questions []string
	)
	sem := make(chan struct{}, r.limits.ToolConcurrency)
	for _, c := range calls {
		select {
		case sem <- struct{}{}:
		case <-step.Done():
		}
		if step.Err() != nil {
			break // not started: the safe point below records it as cancelled
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			asked, err := r.call(ctx, step, pr.last.itemID, c)
			mu.Lock()
			defer mu.Unlock()
			if err != nil && firstErr == nil {
				firstErr = err
			}
			if asked {
				questions = append(questions, toolItemID(pr.last.itemID, c.ID))
			}
		}()
	}
	wg.Wait()
	cancel()
	if firstErr != nil {
		return firstErr
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if r.wall.Err() != nil {
		return r.budget(ctx, fmt.Sprintf("the run exceeded its wall time of %s", r.limits.MaxWallTime))
	}
	// after_tool_result: results are in the log; a cancel applies now.
	if stop, err := r.run.SafePoint(ctx, executor.AfterToolResult,
		executor.SafePointOptions{Unstarted: r.cancelledCalls(analyze(r.run.Events()))}); err != nil || stop {
		return stopOr(err)
	}
	if len(questions) == 0 {
		return nil
	}
	slices.Sort(questions)
	st, err := r.run.Append(ctx, executor.AppendOptions{}, events.Draft{Type: events.RunPaused,
		Payload: events.RunPausedPayload{PauseReason: events.PauseAwaitingUserInput, ItemIDs: questions}})
	if err != nil {
		return err
	}
	// A cancel accepted while the pause was being committed found the run
	// running, so it waits as pending: honour it now.
	if len(st.Pending) > 0 {
		if _, err := r.run.SafePoint(ctx, executor.AfterToolResult, executor.SafePointOptions{}); err != nil {
			return err
		}
	}
	return errStop
}

// call runs one tool call as one item. It returns asked=true when the tool
// asks the user (the item stays open). Tool failures are results for the
// model, never errors; an error means the log could not be written.
func (r *runner) call(ctx, step context.Context, responseID string, c events.ToolCallRef) (asked bool, err error) {
	id := toolItemID(responseID, c.ID)
	tool, args, bad := r.prepare(c)
	itemType := r.itemType(c.Name)
	data := events.ToolCallData{ToolCallID: c.ID, ToolName: c.Name, Arguments: c.Arguments, ResponseItemID: responseID}
	if bad == nil && itemType == events.ItemClarificationRequest {
		var q struct {
			Question string `json:"question"`
		}
		_ = json.Unmarshal(args, &q)
		data.Question = q.Question
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return false, err
	}
	if _, err := r.run.Append(ctx, executor.AppendOptions{}, events.Draft{Type: events.ItemStarted, ItemID: id,
		Payload: events.ItemStartedPayload{ItemType: itemType, Data: raw}}); err != nil {
		return false, err
	}
	var res tools.Result
	if bad != nil {
		res = *bad
	} else {
		res, err = r.execute(ctx, step, id, tool, c, args)
		if err != nil {
			return false, err
		}
	}
	if res.Question != "" {
		return true, nil
	}
	if res.ErrorCode == events.ToolErrCancelled && r.wall.Err() != nil && ctx.Err() == nil {
		res.ErrorCode, res.Output = events.ToolErrBudgetExhausted, "the run's wall-time budget ended while the tool ran"
	}
	if res.ErrorCode != "" {
		_, err = r.run.Append(ctx, executor.AppendOptions{}, events.Draft{Type: events.ItemFailed, ItemID: id,
			Payload: events.ItemFailedPayload{ItemType: itemType, ErrorCode: res.ErrorCode, Message: res.Output}})
		return false, err
	}
	out, err := json.Marshal(events.ToolResultData{ToolCallID: c.ID, ToolName: c.Name, Output: res.Output,
		Exec: res.Exec, FileChange: res.FileChange})
	if err != nil {
		return false, err
	}
	_, err = r.run.Append(ctx, executor.AppendOptions{}, events.Draft{Type: events.ItemCompleted, ItemID: id,
		Payload: events.ItemCompletedPayload{ItemType: itemType, Status: events.ItemStatusCompleted, Content: res.Output, Data: out}})
	return false, err
}

// prepare finds the tool and validates the arguments. A tool the profile does
// not offer is unknown to the model, even when the registry has it.
func (r *runner) prepare(c events.ToolCallRef) (tools.Tool, json.RawMessage, *tools.Result) {
	if !slices.Contains(r.p.Tools, c.Name) {
		res := tools.Failed(events.ToolErrUnknownTool, fmt.Sprintf("unknown tool %q; available tools: %v", c.Name, r.p.Tools))
		return nil, nil, &res
	}
	return r.e.cfg.Tools.Prepare(c.Name, c.Arguments)
}

// execute runs a validated call, streaming its output as deltas of item id.
func (r *runner) execute(ctx, step context.Context, id string, tool tools.Tool, c events.ToolCallRef, args json.RawMessage) (tools.Result, error) {
	call := tools.Call{ID: c.ID, Name: c.Name, Arguments: args}
	if tool.ItemType() != events.ItemClarificationRequest {
		s, err := r.openSandbox(ctx)
		if err != nil {
			r.log.Error("sandbox unavailable", zap.Error(err))
			return tools.Failed(events.ToolErrToolError, "the sandbox is unavailable: "+err.Error()), nil
		}
		call.Sandbox = s
	}
	out := newOutputStream(ctx, r, id)
	call.Output = out.write
	res := tool.Run(step, call)
	if err := out.close(); err != nil {
		return tools.Result{}, err
	}
	return res, nil
}

// cancelledCalls records the calls of the last response that never started
// as started-and-cancelled items.
func (r *runner) cancelledCalls(pr progress) []events.Draft {
	if pr.last == nil {
		return nil
	}
	var drafts []events.Draft
	for _, c := range pr.unstarted {
		id := toolItemID(pr.last.itemID, c.ID)
		t := r.itemType(c.Name)
		data, _ := json.Marshal(events.ToolCallData{ToolCallID: c.ID, ToolName: c.Name, Arguments: c.Arguments, ResponseItemID: pr.last.itemID})
		drafts = append(drafts,
			events.Draft{Type: events.ItemStarted, ItemID: id, Payload: events.ItemStartedPayload{ItemType: t, Data: data}},
			events.Draft{Type: events.ItemFailed, ItemID: id, Payload: events.ItemFailedPayload{ItemType: t,
				ErrorCode: events.ToolErrCancelled, Message: "the run was cancelled before this tool call started"}})
	}
	return drafts
}

// itemType is the item a call of the named tool is recorded as: the tool's
// own type when the profile offers it, else a generic tool_call.
func (r *runner) itemType(name string) events.ItemType {
	if tool, ok := r.e.cfg.Tools.Get(name); ok && slices.Contains(r.p.Tools, name) {
		return tool.ItemType()
	}
	return events.ItemToolCall
}

// outputStream coalesces a tool's streamed output into deltas of its item.
// Output arrives from the process's stdout and stderr concurrently.
type outputStream struct {
	ctx context.Context
	r   *runner
	id  string

	mu        sync.Mutex
	buf       string
	lastFlush int64
	err       error
}

func newOutputStream(ctx context.Context, r *runner, id string) *outputStream {
	return &outputStream{ctx: ctx, r: r, id: id, lastFlush: nowMs()}
}

func (o *outputStream) write(_, chunk string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.buf += chunk
	if len(o.buf) >= o.r.e.cfg.FlushBytes || nowMs()-o.lastFlush >= o.r.e.cfg.FlushInterval.Milliseconds() {
		o.flushLocked()
	}
}

func (o *outputStream) flushLocked() {
	if o.buf != "" && o.err == nil {
		_, o.err = o.r.run.Append(o.ctx, executor.AppendOptions{}, events.Draft{Type: events.ItemDelta, ItemID: o.id,
			Payload: events.ItemDeltaPayload{Delta: o.buf}})
	}
	o.buf, o.lastFlush = "", nowMs()
}

func (o *outputStream) close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.flushLocked()
	return o.err
}

// answer completes a clarification_request with the user's answer, as the
// ask_user call's result.
func (r *runner) answer(it events.ItemRef, content string) events.Draft {
	var call events.ToolCallData
	for _, e := range r.run.Events() {
		if e.ItemID == it.ID && e.Type == events.ItemStarted {
			if p, err := e.DecodePayload(); err == nil {
				_ = json.Unmarshal(p.(*events.ItemStartedPayload).Data, &call)
			}
		}
	}
	data, _ := json.Marshal(events.ToolResultData{ToolCallID: call.ToolCallID, ToolName: call.ToolName, Output: content})
	return events.Draft{Type: events.ItemCompleted, ItemID: it.ID, Payload: events.ItemCompletedPayload{
		ItemType: it.Type, Status: events.ItemStatusCompleted, Content: content, Data: data}}
}
