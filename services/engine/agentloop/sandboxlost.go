package agentloop

import (
	"context"
	"errors"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/engine/compute"
	"github.com/xbot-runtime/xbot/services/engine/tools"
)

// A tool call that finds the run's sandbox lost (compute.ErrSandboxLost:
// deleted under the run, its provider crashed) fails with sandbox_error like
// any tool error, and then the run fails with sandbox_error too: the reply
// cannot go on without the files and processes it was working with, and
// guessing would answer a different conversation. The handle is dropped; the
// key's next run (a session's next message) opens a fresh sandbox.

// noteLost records the first sandbox_error of the execution's tool calls.
func (r *execution) noteLost(res tools.Result) {
	if res.ErrorCode != events.ToolErrSandboxError {
		return
	}
	r.sbMu.Lock()
	defer r.sbMu.Unlock()
	if r.lost == "" {
		r.lost = res.Output
	}
}

// failIfSandboxLost fails the run with sandbox_error when a call found the
// sandbox lost; it returns errStop then, nil otherwise.
func (r *execution) failIfSandboxLost(ctx context.Context) error {
	r.sbMu.Lock()
	msg := r.lost
	r.sbMu.Unlock()
	if msg == "" {
		return nil
	}
	r.log.Warn("the run's sandbox was lost; the run fails with sandbox_error")
	return r.fail(ctx, events.FailSandboxError, "the run's sandbox was lost while a tool ran: "+msg)
}

// unavailable is the result of a call whose sandbox could not be opened.
func unavailable(err error) tools.Result {
	if errors.Is(err, compute.ErrSandboxLost) {
		return tools.Failed(events.ToolErrSandboxError, "the sandbox was lost: "+err.Error())
	}
	return tools.Failed(events.ToolErrToolError, "the sandbox is unavailable: "+err.Error())
}
