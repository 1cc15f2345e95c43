package executor

import (
	"context"

	"github.com/xbot-runtime/xbot/services/profile"
)

// Engine runs the agent loop of one run. Execute is called with the run
// queued (first start) or running (resumed by a new owner after a crash or a
// rebalance, after the executor appended runtime.run.checkpoint_restored and
// closed the items that were open). It returns when the run reached a
// terminal state or ctx ended (the partition was revoked; the next owner
// resumes the run). A returned error other than a context or ownership error
// fails the run with code internal.
type Engine interface {
	Execute(ctx context.Context, run *Run, p profile.Profile) error
}

// SafePoint names a point of the agent loop where buffered commands apply
// (seed 004 §5.1).
type SafePoint string

// The five safe points.
const (
	BeforeModelRequest  SafePoint = "before_model_request"
	AfterModelResponse  SafePoint = "after_model_response"
	BeforeToolExecution SafePoint = "before_tool_execution"
	AfterToolResult     SafePoint = "after_tool_result"
	BeforeRunTerminal   SafePoint = "before_run_terminal"
)
