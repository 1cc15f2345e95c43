package agentloop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/metrics"
	"github.com/xbot-runtime/xbot/services/engine/compute"
	"github.com/xbot-runtime/xbot/services/engine/mcp"
	"github.com/xbot-runtime/xbot/services/engine/policy"
	"github.com/xbot-runtime/xbot/services/engine/tools"
	"github.com/xbot-runtime/xbot/services/executor"
)

func nowMs() int64 { return time.Now().UnixMilli() }

// pendingCall is a tool call the tool stage may run: a call of the last
// response with no item yet, or an item a person allowed while the run was
// paused (its item exists; it has not run).
type pendingCall struct {
	responseID string
	call       events.ToolCallRef
	itemID     string // set for an approved item
	grantID    string // the grant that let the call skip approval
}

// approved returns the run's allowed items that have not run: open tool
// items a decision allowed.
func (r *execution) approved(st events.RunState) []pendingCall {
	var out []pendingCall
	for it := range st.Items.All() {
		if !it.Approved || it.Status != events.ItemStatusStarted {
			continue
		}
		if data, ok := r.callData(it.ID); ok {
			out = append(out, pendingCall{responseID: data.ResponseItemID, itemID: it.ID,
				call: events.ToolCallRef{ID: data.ToolCallID, Name: data.ToolName, Arguments: data.Arguments}})
		}
	}
	return out
}

// callData returns the ToolCallData an item started with.
func (r *execution) callData(itemID string) (events.ToolCallData, bool) {
	var call events.ToolCallData
	for _, e := range r.run.Events() {
		if e.ItemID == itemID && e.Type == events.ItemStarted {
			if p, err := e.DecodePayload(); err == nil && events.Unmarshal(p.(*events.ItemStartedPayload).Data, &call) == nil {
				return call, true
			}
		}
	}
	return call, false
}

// toolStage runs before_tool_execution, the policy, the calls that may run
// (several at once, up to the profile's concurrency), and after_tool_result.
//   - A call the policy denies fails as blocked_by_policy; nobody is asked.
//   - A call that needs approval, with no grant covering it, becomes an item
//     awaiting approval; once the other calls are done, the run pauses until
//     every such item is decided.
//   - A call to ask_user leaves its clarification_request open and pauses
//     the run once the other calls are done.
func (r *execution) toolStage(ctx context.Context, pr progress) error {
	ctx, end := stage(ctx, metrics.StageTools)
	defer end()
	if stop, err := r.run.SafePoint(ctx, executor.BeforeToolExecution,
		executor.SafePointOptions{Unstarted: r.cancelledCalls(pr)}); err != nil || stop {
		return stopOr(err)
	}
	st := r.run.State()
	runnable := r.approved(st)
	left := r.limits.MaxToolCalls - pr.toolCalls
	if left <= 0 && len(pr.unstarted) > 0 {
		return r.budget(ctx, fmt.Sprintf("the run reached its limit of %d tool calls", r.limits.MaxToolCalls))
	}
	var blocked, asks []events.Draft
	now := nowMs() // a grant's expiry is checked at the call, which the log records either way
	for _, c := range pr.unstarted[:min(max(left, 0), len(pr.unstarted))] {
		pc := pendingCall{responseID: pr.last.itemID, call: c}
		d := r.decide(c)
		switch d.Action {
		case policy.Deny:
			blocked = append(blocked, r.blockedDrafts(pc, d)...)
		case policy.RequireApproval:
			if g, ok := st.Granted(c.Name, d.RuleID, now); ok {
				pc.grantID = g.GrantID
				runnable = append(runnable, pc)
				continue
			}
			asks = append(asks, r.askDrafts(pc, d, st, now)...)
		default:
			runnable = append(runnable, pc)
		}
	}
	if len(blocked) > 0 {
		// No tool runs and nobody is answered: the next append that waits commits them.
		if _, err := r.run.Append(ctx, executor.AppendOptions{NoWait: true}, blocked...); err != nil {
			return err
		}
	}
	if len(asks) > 0 {
		// Questions to the user wait until the approvals are decided: one
		// pause at a time. They run when the run resumes.
		// The questions stay unstarted in the log; the next tool stage runs them.
		runnable = withoutQuestions(r, runnable)
	}
	questions, err := r.runCalls(ctx, runnable)
	if err != nil {
		return err
	}
	if err := r.failIfSandboxLost(ctx); err != nil {
		return err
	}
	if msg := r.overBudget(); msg != "" {
		return r.budget(ctx, msg)
	}
	// after_tool_result: results are in the log; a cancel applies now.
	if stop, err := r.run.SafePoint(ctx, executor.AfterToolResult,
		executor.SafePointOptions{Unstarted: r.cancelledCalls(r.progress())}); err != nil || stop {
		return stopOr(err)
	}
	switch {
	case len(asks) > 0:
		var ids []string
		for _, d := range asks {
			if d.Type == events.ItemAwaitingApproval {
				ids = append(ids, d.ItemID)
			}
		}
		return r.pause(ctx, events.PauseAwaitingApproval, ids, asks...)
	case len(questions) > 0:
		slices.Sort(questions)
		return r.pause(ctx, events.PauseAwaitingUserInput, questions)
	}
	return r.compactIfLarge(ctx, events.CompactPostToolResult)
}

// withoutQuestions drops the ask_user calls from calls.
func withoutQuestions(r *execution, calls []pendingCall) []pendingCall {
	var out []pendingCall
	for _, c := range calls {
		if r.itemType(c.call.Name) != events.ItemClarificationRequest {
			out = append(out, c)
		}
	}
	return out
}

// pause appends drafts and pauses the run for reason, waiting on items.
func (r *execution) pause(ctx context.Context, reason events.PauseReason, items []string, drafts ...events.Draft) error {
	drafts = append(drafts, events.Draft{Type: events.RunPaused,
		Payload: events.RunPausedPayload{PauseReason: reason, ItemIDs: items}})
	st, err := r.run.Append(ctx, executor.AppendOptions{}, drafts...)
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

// decide runs the policy on a call. Calls that will fail anyway (unknown
// tool, invalid arguments) are allowed here and fail as tool errors.
func (r *execution) decide(c events.ToolCallRef) policy.Decision {
	if _, ok := r.lookup(c.Name); !ok {
		return policy.Decision{Action: policy.Allow}
	}
	return r.policy.Decide(r.policyRun(), c.Name, json.RawMessage(c.Arguments))
}

// startData is the item.started of a tool call.
func (r *execution) startData(pc pendingCall) events.ItemStartedPayload {
	data := r.newCallData(pc.call, pc.responseID)
	data.GrantID = pc.grantID
	if t := r.itemType(pc.call.Name); t == events.ItemClarificationRequest {
		var q struct {
			Question string `json:"question"`
		}
		_ = events.Unmarshal([]byte(pc.call.Arguments), &q)
		data.Question = q.Question
	}
	raw, _ := json.Marshal(data) // plain strings: cannot fail
	return events.ItemStartedPayload{ItemType: r.itemType(pc.call.Name), Data: raw}
}

// newCallData is what an item that runs call records when it starts: the
// call, and for an MCP tool its server and the tool's own name.
func (r *execution) newCallData(c events.ToolCallRef, responseID string) events.ToolCallData {
	data := events.ToolCallData{ToolCallID: c.ID, ToolName: c.Name, Arguments: c.Arguments, ResponseItemID: responseID}
	if t, ok := r.lookup(c.Name); ok {
		if m, ok := t.(*mcp.Tool); ok {
			call := m.Call()
			data.MCP = &call
		}
	}
	return data
}

// blockedDrafts records a call the policy forbids: the model learns why
// (blocked_by_policy), nobody is asked.
func (r *execution) blockedDrafts(pc pendingCall, d policy.Decision) []events.Draft {
	id := toolItemID(pc.responseID, pc.call.ID)
	start := r.startData(pc)
	return []events.Draft{
		{Type: events.ItemStarted, ItemID: id, Payload: start},
		{Type: events.ItemFailed, ItemID: id, Payload: events.ItemFailedPayload{ItemType: start.ItemType,
			ErrorCode: events.ToolErrBlockedByPolicy, Message: fmt.Sprintf("blocked by policy rule %s: %s", d.RuleID, d.Reason),
			RuleID: d.RuleID}},
	}
}

// askDrafts records a call that waits for a person's decision, and, when a
// grant covered such calls and no longer does at now, which one and why.
func (r *execution) askDrafts(pc pendingCall, d policy.Decision, st events.RunState, now int64) []events.Draft {
	id := toolItemID(pc.responseID, pc.call.ID)
	start := r.startData(pc)
	input := json.RawMessage(pc.call.Arguments)
	if !json.Valid(input) {
		input, _ = json.Marshal(map[string]string{"arguments": pc.call.Arguments})
	}
	ask := events.ItemAwaitingApprovalPayload{ItemType: start.ItemType, ToolName: pc.call.Name, Input: input,
		ApprovalID: commands.ApprovalID(r.run.ID(), id), RuleID: d.RuleID, Reason: d.Reason}
	if g, why, ok := st.Lapsed(pc.call.Name, d.RuleID, now); ok {
		ask.AskReason, ask.GrantID = why, g.GrantID
	}
	return []events.Draft{
		{Type: events.ItemStarted, ItemID: id, Payload: start},
		{Type: events.ItemAwaitingApproval, ItemID: id, Payload: ask},
	}
}

// runCalls runs calls concurrently, up to the profile's concurrency. It
// returns the items of calls that asked the user a question.
func (r *execution) runCalls(ctx context.Context, calls []pendingCall) (questions []string, err error) {
	if len(calls) == 0 {
		return nil, nil
	}
	step, cancel := r.run.Step(r.wall)
	defer cancel()
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	sem := make(chan struct{}, r.limits.ToolConcurrency)
	for _, c := range calls {
		select {
		case sem <- struct{}{}:
		case <-step.Done():
		}
		if step.Err() != nil {
			break // not started: the safe point records it as cancelled
		}
		if r.overEventBudget() {
			<-sem
			break // not started: the run fails at the next check
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			asked, err := r.call(ctx, step, c)
			mu.Lock()
			defer mu.Unlock()
			if err != nil && firstErr == nil {
				firstErr = err
			}
			if asked {
				questions = append(questions, toolItemID(c.responseID, c.call.ID))
			}
		}()
	}
	wg.Wait()
	cancel()
	if firstErr != nil {
		return nil, firstErr
	}
	return questions, ctx.Err()
}

// call runs one tool call as one item (started here, or already started and
// approved). It returns asked=true when the tool asks the user (the item
// stays open). Tool failures are results for the model, never errors; an
// error means the log could not be written.
func (r *execution) call(ctx, step context.Context, pc pendingCall) (asked bool, err error) {
	c := pc.call
	id := toolItemID(pc.responseID, c.ID)
	tool, args, bad := r.prepare(c)
	if pc.itemID == "" {
		// The start is durable before the tool runs: this append waits.
		if _, err := r.run.Append(ctx, executor.AppendOptions{}, events.Draft{Type: events.ItemStarted, ItemID: id,
			Payload: r.startData(pc)}); err != nil {
			return false, err
		}
	}
	var res tools.Result
	var cut streamCut
	if bad != nil {
		res = *bad
	} else if res, cut, err = r.execute(ctx, step, id, tool, c, args); err != nil {
		return false, err
	}
	if res.Question != "" {
		return true, nil
	}
	r.noteLost(res)
	return false, r.closeCall(ctx, id, c, res, cut)
}

// closeCall appends the item's result: failed, or completed with its output
// offloaded when too large, after the stream's truncation marker if any.
// The result does not wait for its commit: the call's side effect is done,
// and its start, already durable, is what keeps a crash from running it
// twice. The result joins the partition's next commit (at the latest, the
// next append that waits: the next tool's start, a pause, the run's end);
// lost in a crash before that, the call is closed runtime_lost, as when the
// crash comes while it runs.
func (r *execution) closeCall(ctx context.Context, id string, c events.ToolCallRef, res tools.Result, cut streamCut) error {
	itemType := r.itemType(c.Name)
	if res.ErrorCode == events.ToolErrCancelled && r.wall.Err() != nil && ctx.Err() == nil {
		res.ErrorCode, res.Output = events.ToolErrBudgetExhausted, "the run's wall-time budget ended while the tool ran"
	}
	if res.ErrorCode != "" {
		_, err := r.run.Append(ctx, executor.AppendOptions{NoWait: true}, append(cut.marker(id, nil), events.Draft{Type: events.ItemFailed, ItemID: id,
			Payload: events.ItemFailedPayload{ItemType: itemType, ErrorCode: res.ErrorCode, Message: res.Output}})...)
		return err
	}
	r.offload(ctx, id, &res)
	out, err := json.Marshal(events.ToolResultData{ToolCallID: c.ID, ToolName: c.Name, Output: res.Output,
		Exec: res.Exec, FileChange: res.FileChange, OutputRef: res.OutputRef, MCP: res.MCP})
	if err != nil {
		return err
	}
	_, err = r.run.Append(ctx, executor.AppendOptions{NoWait: true}, append(cut.marker(id, res.OutputRef), events.Draft{Type: events.ItemCompleted, ItemID: id,
		Payload: events.ItemCompletedPayload{ItemType: itemType, Status: events.ItemStatusCompleted, Content: res.Output, Data: out}})...)
	return err
}

// offload stores an output too large for the context in the run's output
// directory; the model gets a preview and a ref it can read
// with read_file_part. When storing fails, the output is cut instead.
func (r *execution) offload(ctx context.Context, itemID string, res *tools.Result) {
	limit := r.ctxCfg.OffloadBytes
	if limit <= 0 || len(res.Output) <= limit {
		return
	}
	sb, err := r.openSandbox(ctx)
	if err == nil {
		err = tools.Offload(ctx, sb, itemID, res, limit)
	}
	if err != nil {
		r.log.Warn("offloading a large tool output failed; cutting it instead", zap.Error(err))
		tools.TruncateOutput(res, limit)
	}
}

// prepare finds the tool and validates the arguments. A tool the profile does
// not offer is unknown to the model, even when the registry has it.
func (r *execution) prepare(c events.ToolCallRef) (tools.Tool, json.RawMessage, *tools.Result) {
	switch {
	case slices.Contains(r.p.Tools, c.Name):
		return r.e.cfg.Tools.Prepare(c.Name, c.Arguments)
	case r.mcpTools != nil && slices.Contains(r.mcpTools.Names(), c.Name):
		return r.mcpTools.Prepare(c.Name, c.Arguments)
	}
	res := tools.Failed(events.ToolErrUnknownTool, fmt.Sprintf("unknown tool %q; available tools: %v", c.Name, r.offered()))
	return nil, nil, &res
}

// execute runs a validated call, streaming its output as deltas of item id.
func (r *execution) execute(ctx, step context.Context, id string, tool tools.Tool, c events.ToolCallRef, args json.RawMessage) (tools.Result, streamCut, error) {
	call := tools.Call{ID: c.ID, ItemID: id, Name: c.Name, Arguments: args}
	if tool.ItemType() != events.ItemClarificationRequest {
		s, err := r.openSandbox(ctx)
		switch {
		case err == nil:
			call.Sandbox = s
		case isRemoteMCP(tool) && !errors.Is(err, compute.ErrSandboxLost):
			// It needs the sandbox only to store large results, which are
			// cut instead.
			r.log.Warn("sandbox unavailable for a remote MCP call's large results", zap.Error(err))
		default:
			r.log.Error("sandbox unavailable", zap.Error(err))
			return unavailable(err), streamCut{}, nil
		}
	}
	out := newOutputStream(ctx, r, id)
	call.Output = out.write
	called := toolCall(ctx, c.Name)
	res := tool.Run(step, call)
	called(res)
	cut, err := out.close()
	if err != nil {
		return tools.Result{}, streamCut{}, err
	}
	return res, cut, nil
}

// isRemoteMCP reports whether tool is a remote MCP server's.
func isRemoteMCP(tool tools.Tool) bool {
	m, ok := tool.(*mcp.Tool)
	return ok && m.Remote()
}

// cancelledCalls records the calls of the last response that never started
// as started-and-cancelled items.
func (r *execution) cancelledCalls(pr progress) []events.Draft {
	if pr.last == nil {
		return nil
	}
	var drafts []events.Draft
	for _, c := range pr.unstarted {
		id := toolItemID(pr.last.itemID, c.ID)
		t := r.itemType(c.Name)
		data, _ := json.Marshal(r.newCallData(c, pr.last.itemID))
		drafts = append(drafts,
			events.Draft{Type: events.ItemStarted, ItemID: id, Payload: events.ItemStartedPayload{ItemType: t, Data: data}},
			events.Draft{Type: events.ItemFailed, ItemID: id, Payload: events.ItemFailedPayload{ItemType: t,
				ErrorCode: events.ToolErrCancelled, Message: "the run was cancelled before this tool call started"}})
	}
	return drafts
}

// itemType is the item a call of the named tool is recorded as: the tool's
// own type when the profile offers it, else a generic tool_call.
func (r *execution) itemType(name string) events.ItemType {
	if tool, ok := r.lookup(name); ok {
		return tool.ItemType()
	}
	return events.ItemToolCall
}

// answer completes a clarification_request with the user's answer, as the
// ask_user call's result.
func (r *execution) answer(it events.ItemRef, content string) events.Draft {
	var call events.ToolCallData
	for _, e := range r.run.Events() {
		if e.ItemID == it.ID && e.Type == events.ItemStarted {
			if p, err := e.DecodePayload(); err == nil {
				_ = events.Unmarshal(p.(*events.ItemStartedPayload).Data, &call)
			}
		}
	}
	data, _ := json.Marshal(events.ToolResultData{ToolCallID: call.ToolCallID, ToolName: call.ToolName, Output: content})
	return events.Draft{Type: events.ItemCompleted, ItemID: it.ID, Payload: events.ItemCompletedPayload{
		ItemType: it.Type, Status: events.ItemStatusCompleted, Content: content, Data: data}}
}
