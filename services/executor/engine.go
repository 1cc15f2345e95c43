package executor

import (
	"context"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/engine/profile"
)

// Engine runs the agent loop of one run. Execute is called with the run
// running: just started, or resumed by a new owner after a crash or a
// rebalance (after the executor appended runtime.run.checkpoint_restored and
// closed the items that were open), or paused with a pending command that may
// resume it; or, for an engine that starts runs itself (Starter), queued and
// given its sandbox key, to be started with Run.Start. It returns when the run reached a terminal state, paused, or ctx
// ended (the partition was revoked; the next owner resumes the run). A
// returned error other than a context or ownership error fails the run with
// code internal.
type Engine interface {
	Execute(ctx context.Context, run *Run, p profile.Profile) error
	// Implements reports whether the engine honours a command type or intent
	// beyond CreateRun and CancelRun (see commands.AdmitOptions.Implemented);
	// a command it does not is rejected not_implemented at admission.
	Implements(what string) bool
	// Snapshot resolves profile p, with the grants the run inherits, into the
	// run's capability snapshot (the tool specs the engine offers, ...). An
	// engine with nothing to add returns profile.NewSnapshot(p, nil, grants).
	Snapshot(p profile.Profile, grants []events.PermissionGrant) (profile.Snapshot, error)
}

// Starter is an Engine that starts some runs itself: those whose capability
// snapshot needs work the partition's worker must not wait for (an agent's
// MCP servers connected and listed, its skills resolved). Such a run is not
// started at admission: the executor hands it to Execute still queued (its
// sandbox key given to it), and Execute must first call Run.Start, which
// freezes the snapshot and starts the run. A crash before the start
// committed leaves the run queued; its next owner hands it over again.
type Starter interface {
	StartsRun(p profile.Profile) bool
}

// SafePoint names a point of the agent loop where buffered commands apply.
type SafePoint string

// The five safe points.
const (
	BeforeModelRequest  SafePoint = "before_model_request"
	AfterModelResponse  SafePoint = "after_model_response"
	BeforeToolExecution SafePoint = "before_tool_execution"
	AfterToolResult     SafePoint = "after_tool_result"
	BeforeRunTerminal   SafePoint = "before_run_terminal"
)
